"""Kernels whose only switch point is `cuda.syncthreads()` as a statement of the kernel itself run as Python
generators: each such call becomes a `yield` (gpusim.rewrite compiles the result), and the scheduler resumes
one generator per thread. Resuming a generator costs a fraction of a greenlet switch, and barriers are most of
an unchecked launch's overhead.

Any other way a thread can wait for others (barrier predicates, warp collectives, atomics, fences, a barrier
inside a device function or a nested scope) keeps the kernel on greenlets, which handle every case. The
rewritten function keeps the kernel's file name, line numbers, globals and closure, so messages, sites and
counters read as before.
"""

import ast
import types

# Names of `cuda` attributes after which a thread may have to wait for others (or be handed over).
SWITCHING = frozenset({
    "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp", "shfl_sync",
    "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "all_sync", "any_sync", "activemask",
    "match_any_sync", "match_all_sync", "eq_sync", "atomic", "threadfence", "threadfence_block",
    "threadfence_system", "cg",
})


def _names(code):
    """Every name a code object (and the code nested in it) refers to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


class _Barriers(ast.NodeTransformer):
    """Turns `<cuda>.syncthreads()` statements of the function body (not of nested scopes) into `yield`."""

    def __init__(self, cuda_names):
        self.cuda_names = cuda_names
        self.count = 0
        self.depth = 0

    def _scope(self, node):
        self.depth += 1
        if self.depth == 1:
            node.decorator_list = []
            node = self.generic_visit(node)
        self.depth -= 1
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _scope

    def visit_Expr(self, node):
        call = node.value
        if (self.depth == 1 and isinstance(call, ast.Call) and not call.args and not call.keywords
                and isinstance(call.func, ast.Attribute) and call.func.attr == "syncthreads"
                and isinstance(call.func.value, ast.Name) and call.func.value.id in self.cuda_names):
            self.count += 1
            return ast.copy_location(ast.Expr(ast.copy_location(ast.Yield(None), call)), node)
        return node


def generator_names(fn, device_functions, fake_cuda):
    """The global names under which the rebound kernel `fn` sees gpusim's `cuda` if it may run as generators
    (its barrier statements then become yields), else None. `device_functions`: every function rebound
    for the launch."""
    for other in device_functions:
        if other is not fn and _names(other.__code__) & SWITCHING:
            return None
    for cell in fn.__closure__ or ():
        try:
            if cell.cell_contents is fake_cuda:
                return None  # a closure-captured `cuda`: rare, leave it to greenlets
        except ValueError:
            pass
    cuda_names = tuple(sorted(name for name, value in fn.__globals__.items() if value is fake_cuda))
    if not cuda_names or (_names(fn.__code__) & SWITCHING) - {"syncthreads"}:
        return None
    return cuda_names


def yields_for_barriers(tree, cuda_names):
    """Turn the barrier statements of the FunctionDef `tree` into yields; False (tree unusable) if any
    switching call is left or there was no barrier."""
    if any(isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)) for node in ast.walk(tree)):
        return False
    barriers = _Barriers(cuda_names)
    barriers.visit(tree)
    left = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in SWITCHING
            or isinstance(n, ast.Name) and n.id in SWITCHING]  # `from numba.cuda import syncthreads`
    return barriers.count > 0 and not left
