"""Kernels whose only switch point is `cuda.syncthreads()` as a statement of the kernel itself run as Python
generators: each such call becomes a `yield`, and the scheduler resumes one generator per thread. Resuming a
generator costs a fraction of a greenlet switch, and barriers are most of an unchecked launch's overhead.

Any other way a thread can wait for others (barrier predicates, warp collectives, atomics, fences, a barrier
inside a device function or a nested scope) keeps the kernel on greenlets, which handle every case. The
rewritten function keeps the kernel's file name, line numbers, globals and closure, so messages, sites and
counters read as before.
"""

import ast
import inspect
import textwrap
import types

# Names of `cuda` attributes after which a thread may have to wait for others (or be handed over).
SWITCHING = frozenset({
    "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp", "shfl_sync",
    "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "all_sync", "any_sync", "activemask",
    "match_any_sync", "match_all_sync", "atomic", "threadfence", "threadfence_block", "threadfence_system",
})

_cache = {}


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


def _rewritten_code(fn, cuda_names):
    """The code object of `fn` with its barrier statements turned into yields, or None if that is unsafe."""
    code = fn.__code__
    key = (code, cuda_names)
    if key in _cache:
        return _cache[key]
    _cache[key] = None
    try:
        lines, first = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    if any(isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)) for node in ast.walk(tree)):
        return None
    barriers = _Barriers(cuda_names)
    tree = barriers.visit(tree)
    left = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in SWITCHING
            or isinstance(n, ast.Name) and n.id in SWITCHING]  # `from numba.cuda import syncthreads`
    if not barriers.count or left:
        return None
    ast.increment_lineno(tree, first - 1)
    inner = tree.body[0]
    freevars = code.co_freevars
    if freevars:  # compile inside a function that binds the closure's names, so that they stay free variables
        outer = ast.FunctionDef(
            name="_gpusim_closure", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                       defaults=[]),
            body=[ast.Assign([ast.Name(v, ast.Store())], ast.Constant(None)) for v in freevars] + [inner],
            decorator_list=[], returns=None, type_comment=None,
        )
        tree.body = [ast.copy_location(outer, inner)]
    ast.fix_missing_locations(tree)
    module = compile(tree, code.co_filename, "exec")
    found = [c for c in _codes(module) if c.co_name == code.co_name and c.co_flags & inspect.CO_GENERATOR]
    if len(found) != 1 or not _same_function(code, found[0], cuda_names):
        return None
    _cache[key] = found[0]
    return found[0]


def _same_function(code, new, cuda_names):
    """Does `new` (compiled from the source file) still match `code` (what Python runs): same variables, names
    and lines? A source file edited since the kernel was defined fails this."""
    def lines(c):  # the lines of its instructions, but for the first line (`@cuda.jit` or `def`)
        skip = (None, c.co_firstlineno)
        return {line for c2 in _codes(c) for _, _, line in c2.co_lines() if line not in skip}

    dropped = set(code.co_names) - set(new.co_names)
    return (new.co_varnames == code.co_varnames and new.co_freevars == code.co_freevars
            and new.co_argcount == code.co_argcount and set(new.co_names) <= set(code.co_names)
            and dropped <= {"syncthreads", *cuda_names} and lines(new) <= lines(code))


def _codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def as_generator(fn, device_functions, fake_cuda):
    """A generator-function twin of the rebound kernel `fn` (same globals, closure and defaults), or None
    when the kernel must run on greenlets. `device_functions`: the other functions rebound for the launch."""
    for other in device_functions:
        if other is not fn and _names(other.__code__) & SWITCHING:
            return None
    cuda_names = tuple(sorted(name for name, value in fn.__globals__.items() if value is fake_cuda))
    for cell in fn.__closure__ or ():
        try:
            if cell.cell_contents is fake_cuda:
                return None  # a closure-captured `cuda`: rare, leave it to greenlets
        except ValueError:
            pass
    if not cuda_names or (_names(fn.__code__) & SWITCHING) - {"syncthreads"}:
        return None
    code = _rewritten_code(fn, cuda_names)
    if code is None:
        return None
    gen = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    gen.__kwdefaults__ = fn.__kwdefaults__
    return gen
