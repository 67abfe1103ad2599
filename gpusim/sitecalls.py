"""In a checked launch, the kernel's own element accesses `a[i]`, `a[i, j]` and `a[i] = v`, `a[i, j] = v` on
its array arguments and shared arrays become method calls that carry their call site as a constant:
`a._r2(i, j, SITE)`, `a._w1(v, i, SITE)`. SITE is the code tag plus the bytecode offset of the call, exactly
what the array would otherwise read from the caller's frame on every access (gpusim.arrays), so the log,
counters and messages stay the same, and the index tuple is neither built nor unpacked.

Only names that surely hold a checked array are rewritten: parameters that received an array in this launch
and shared arrays (`name = cuda.shared.array(...)`), each never assigned anywhere else. Every other access
(slices, augmented assignments, three or more indices, nested scopes) keeps the ordinary path.
"""

import ast
import dis

PLACEHOLDER = 0x5EC0_0000_0000  # site constants before the offsets are known; never a kernel's own constant
METHODS = frozenset({"_r1", "_r2", "_w1", "_w2"})


class SiteCalls(ast.NodeTransformer):
    """Rewrites the element accesses of `names` in the body of one function (not in nested scopes)."""

    def __init__(self, names, taken):
        self.names = names
        self.next = PLACEHOLDER
        self.taken = taken
        self.placeholders = []

    def _placeholder(self):
        while self.next in self.taken:
            self.next += 1
        self.placeholders.append(self.next)
        self.next += 1
        return ast.Constant(self.placeholders[-1])

    def _parts(self, node):
        """The index expressions of `name[...]` if it can take the site-call path, else None."""
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and node.value.id in self.names):
            return None
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if not 1 <= len(parts) <= 2 or any(isinstance(p, (ast.Slice, ast.Starred)) for p in parts):
            return None
        return parts

    def _nested(self, node):
        return node  # nested scopes and comprehensions may shadow the names: left as they are

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _nested
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _nested

    def visit_Subscript(self, node):
        node = self.generic_visit(node)
        parts = self._parts(node)
        if parts is None or not isinstance(node.ctx, ast.Load):
            return node
        method = ast.Attribute(ast.Name(node.value.id, ast.Load()), f"_r{len(parts)}", ast.Load())
        return ast.copy_location(ast.Call(method, [*parts, self._placeholder()], []), node)

    def visit_Assign(self, node):
        target = node.targets[0] if len(node.targets) == 1 else None
        parts = self._parts(target)
        if parts is None:
            return self.generic_visit(node)
        value = self.visit(node.value)
        parts = [self.visit(p) for p in parts]
        method = ast.Attribute(ast.Name(target.value.id, ast.Load()), f"_w{len(parts)}", ast.Load())
        call = ast.copy_location(ast.Call(method, [value, *parts, self._placeholder()], []), node)
        return ast.copy_location(ast.Expr(call), node)


def array_names(function, arguments, cuda_names):
    """The names in a FunctionDef that surely hold a checked array: parameters in `arguments` (the names
    that received one) and shared arrays (`cuda` among `cuda_names`), each assigned nowhere else."""
    stored = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stored[node.id] = stored.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                stored[name] = stored.get(name, 0) + 2
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            stored[node.name] = stored.get(node.name, 0) + 2
        elif isinstance(node, ast.alias):
            name = (node.asname or node.name).split(".")[0]
            stored[name] = stored.get(name, 0) + 2
    every = function.args
    params = {a.arg for a in every.posonlyargs + every.args + every.kwonlyargs}
    params |= {a.arg for a in (every.vararg, every.kwarg) if a is not None}
    names = {name for name in arguments if name not in stored}
    for node in function.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id not in params and stored.get(node.targets[0].id) == 1
                and _is_shared_array(node.value, cuda_names)):
            names.add(node.targets[0].id)
    return names


def _is_shared_array(value, cuda_names):
    """`cuda.shared.array(...)`, with `cuda` one of `cuda_names`."""
    func = value.func if isinstance(value, ast.Call) else None
    return (isinstance(func, ast.Attribute) and func.attr == "array" and isinstance(func.value, ast.Attribute)
            and func.value.attr == "shared" and isinstance(func.value.value, ast.Name)
            and func.value.value.id in cuda_names)


def resolve(code, placeholders, tag):
    """`code` with each placeholder constant replaced by the code tag plus the offset of the call that
    follows it; None if a placeholder is not followed by a call as expected."""
    offsets = {}
    waiting = None
    for instruction in dis.get_instructions(code):
        if instruction.opname == "LOAD_CONST" and instruction.argval in placeholders:
            waiting = instruction.argval
        elif waiting is not None and instruction.opname == "CALL":
            offsets[waiting] = instruction.offset
            waiting = None
    if set(offsets) != set(placeholders):
        return None
    consts = tuple(tag + offsets[c] if isinstance(c, int) and c in offsets else c for c in code.co_consts)
    return code.replace(co_consts=consts)
