"""Size cliffs: constants in a learner's code that only sizes past every checked case could reach.

A kernel that does something else once ``n > 5000``, or loops ``for c in range(4096)`` and so handles rows
of up to 4096 only, passes every case a check can afford to simulate and fails on the first large input.
No case can show it, so the code is read instead: a comparison, a ``range`` bound or a ``min``/``max``
argument that is a constant integer (a literal, a constant expression, or a name bound to one in the
function or its globals) larger than every size the task's cases use is refused, with its line. Warp masks
and the integer types' limits are not sizes.

    cliffs_in_spec(spec, largest)            # a kernel (course.kernelsource spec) and its device functions
    cliffs_in_function(function, largest)    # a plain-Python task's function
    largest_size(task)                       # the largest size or array dimension its cases use

Each returns [(filename, line, value, source line)], in line order.
"""

from __future__ import annotations

import ast
import functools
import inspect
import operator
import textwrap

import numpy as np

MAX_REPORTED = 3
MAX_BITS = 1 << 14  # a constant expression whose operands are larger is not computed
# warp masks and integer limits (sentinels, as INT_MAX for "none yet"): constants of the machine, not sizes
NOT_SIZES = frozenset({2**32 - 1, 2**64 - 1, 2**31 - 1, 2**63 - 1, 2**31, 2**63, 2**15 - 1, 2**16 - 1})
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.LShift: operator.lshift, ast.Pow: operator.pow,
           ast.Mod: operator.mod}
_INT_CASTS = {"int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp"}


def largest_size(task) -> int:
    """The largest size the task's checked cases reach: a size parameter, or a dimension of an array a case
    builds (kept per task for the process). Dimensions, not element counts: a kernel that compares a
    matrix's side with 2048 is past every case even where some matrix holds more than 2048 elements."""
    key = (task.name, tuple(task.cases))
    if key not in _LARGEST:
        largest = 0
        for case in task.cases:
            numbers = [value for value in dict(case.params).values() if type(value) is int]
            try:
                arrays = [value for value in task.make_args(case).values() if isinstance(value, np.ndarray)]
            except Exception:  # noqa: BLE001 - where inputs are served (grading), the sizes alone
                arrays = []
            largest = max(largest, *numbers, *(side for array in arrays for side in array.shape), 0)
        _LARGEST[key] = largest
    return _LARGEST[key]


_LARGEST: dict[tuple, int] = {}


def cliffs_in_spec(spec, largest: int) -> list[tuple[str, int, int, str]]:
    """The size cliffs of a kernel spec's functions."""
    from course.kernelsource import functions_of

    found = []
    for function in functions_of(spec).values():
        bound = {name: value["int"] for name, value in {**function["globals"], **function["closure"]}.items()
                 if isinstance(value, dict) and type(value.get("int")) is int}
        found += _cliffs(function["source"], tuple(sorted(bound.items())), function["filename"],
                         function["firstline"], largest)
    return sorted(found, key=lambda cliff: cliff[1])[:MAX_REPORTED]


def cliffs_in_function(function, largest: int) -> list[tuple[str, int, int, str]]:
    """The size cliffs of a plain Python function (none where its source cannot be read)."""
    code = getattr(function, "__code__", None)
    if code is None:
        return []
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return []
    bound = {name: value for name, value in getattr(function, "__globals__", {}).items()
             if type(value) is int}
    for name, cell in zip(code.co_freevars, getattr(function, "__closure__", None) or (), strict=False):
        try:
            if type(cell.cell_contents) is int:
                bound[name] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    return _cliffs(source, tuple(sorted(bound.items())), code.co_filename, code.co_firstlineno,
                   largest)[:MAX_REPORTED]


@functools.lru_cache(maxsize=256)
def _cliffs(source: str, bound: tuple, filename: str, firstline: int, largest: int) -> list:
    """The cliffs of one function's source (cached: a check reads the same source for every case)."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return []
    lines = textwrap.dedent(source).splitlines()
    local = _local_constants(tree, dict(bound))
    found = []
    for node in ast.walk(tree):
        for operand in _size_operands(node):
            value = _constant(operand, local)
            if value is not None and abs(value) > largest and abs(value) not in NOT_SIZES:
                text = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
                found.append((filename, firstline + node.lineno - 1, value, text))
                break
    return sorted(set(found), key=lambda cliff: cliff[1])


def _size_operands(node) -> list:
    """The operands of a comparison with something not constant, of range(), min() and max()."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        return operands if len(operands) > 1 else []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("range", "min",
                                                                                        "max"):
        return list(node.args)
    return []


def _local_constants(tree, bound: dict[str, int]) -> dict[str, int]:
    """The globals' integers, and names the code assigns exactly once, to a constant integer."""
    assigned: dict[str, list] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        value = node.value if isinstance(node, ast.Assign) and target is name else None
                        assigned.setdefault(name.id, []).append(value)
        elif isinstance(node, (ast.For, ast.comprehension)):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    assigned.setdefault(name.id, []).append(None)
    local = {name: value for name, value in bound.items() if name not in assigned}
    for name, values in assigned.items():
        if len(values) == 1 and values[0] is not None:
            value = _constant(values[0], local)
            if value is not None:
                local[name] = value
    return local


def _computable(op, left: int, right: int) -> bool:
    """Is `left op right` a number worth computing? Not a negative or huge power or shift, a division by 0,
    or operands so large that the result could take long to compute (learner code may be hostile)."""
    if isinstance(op, (ast.Pow, ast.LShift)) and not 0 <= right <= 64:
        return False
    if isinstance(op, (ast.FloorDiv, ast.Mod)) and right == 0:
        return False
    return abs(left).bit_length() * max(abs(right).bit_length(), 64) <= MAX_BITS


def _constant(node, names: dict[str, int]) -> int | None:
    """The integer a constant expression has, or None."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _constant(node.operand, names)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _constant(node.left, names), _constant(node.right, names)
        if left is None or right is None or not _computable(node.op, left, right):
            return None
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name in _INT_CASTS:
            return _constant(node.args[0], names)
    return None
