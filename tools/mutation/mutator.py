"""Mutants of a solution cell: one small change each, made on the cell's syntax tree and written back into
its text, so that every other line (comments included) and every line number stay as they were.

Only the solution region (between ``### BEGIN SOLUTION`` and ``### END SOLUTION``) is mutated: that is what a
learner writes. A mutant's id is a hash of its notebook, cell and mutated text, so it does not depend on the
order mutants are made in or on which other mutants exist.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"

OPERATORS = {
    "compare": "a comparison flipped: < and <=, > and >=, == and !=",
    "index": "an array index (or slice bound) plus or minus 1",
    "range": "a range() bound plus or minus 1",
    "swap-index": "two dimensions of an index swapped, or .x and .y of threadIdx, blockIdx, blockDim",
    "drop-sync": "a barrier, fence or syncwarp dropped",
    "guard": "a guard always true, one of its conditions dropped, or a Triton mask= dropped",
    "drop-guarded": "a bounds guard dropped with its body",
    "float64": "float32 made float64 (array declarations, casts, dtypes)",
    "reduction": "another reduction operator: max/min, += into *= or -=, + and - in an accumulation, "
                 "atomic.add into atomic.max, sum into max",
    "shrink-loop": "a loop cut short: range(n) into range(n // 2), range(a, b, s) into range(a, b - 1, s), "
                   "the last item of a literal tuple dropped",
    "tile-load": "a shared tile loaded transposed: its store index swapped, or tx and ty swapped in what it "
                 "loads",
}
FLIPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
         ast.NotEq: ast.Eq}
ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
SYNCS = {"syncthreads", "syncwarp", "threadfence", "threadfence_block", "threadfence_system", "debug_barrier"}
AXES = {"x": "y", "y": "x"}
INDEX_ATTRIBUTES = {"threadIdx", "blockIdx", "blockDim"}
OPPOSITES = {"max": "min", "min": "max", "maximum": "minimum", "minimum": "maximum", "amax": "amin",
             "amin": "amax", "fmax": "fmin", "fmin": "fmax"}
AUGMENTED = {ast.Add: (ast.Mult, ast.Sub), ast.Sub: (ast.Add,), ast.Mult: (ast.Add,)}
ATOMICS = {"add": "max", "max": "min", "min": "max"}


@dataclass(frozen=True)
class Change:
    """One mutation of a source text: what operator made it, where, and the whole mutated text."""

    operator: str
    line: int  # 1-based line of the cell where the change starts
    before: str  # that line before and after the change, stripped
    after: str
    source: str


@dataclass(frozen=True)
class Mutant:
    """A change to one solution cell of one notebook, with a stable short id."""

    id: str
    notebook: str  # stem of the solution notebook
    cell: int  # 0-based index of the cell in the notebook
    grade_id: str
    operator: str
    line: int
    before: str
    after: str
    source: str

    @property
    def description(self) -> str:
        return f"{self.grade_id}, line {self.line}, {self.operator}: `{self.before}` → `{self.after}`"


@dataclass(frozen=True)
class _Edit:
    """Replace the text from `start` to `end` (character offsets) by `text`; `line` is where it starts."""

    operator: str
    start: int
    end: int
    text: str
    line: int


def mutants_of_cell(notebook: str, cell: int, grade_id: str, source: str) -> list[Mutant]:
    """Every mutant of one solution cell, in source order, each text once."""
    mutants = []
    for change in mutate(source):
        digest = hashlib.sha1(f"{notebook}\0{grade_id}\0{change.source}".encode()).hexdigest()[:8]
        mutants.append(Mutant(f"{notebook[:2]}-{digest}", notebook, cell, grade_id, change.operator,
                              change.line, change.before, change.after, change.source))
    return mutants


def mutate(source: str) -> list[Change]:
    """Every change the operators make to `source` (its solution region, or all of it when it has none),
    each distinct mutated text once, in source order; an empty list for text that does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    region = _solution_lines(source)
    context = _Context(tree, _Text(source))
    seen, changes = {source}, []
    for edit in _edits(tree, None, context):
        if edit.line not in region:
            continue
        mutated = source[:edit.start] + edit.text + source[edit.end:]
        if mutated in seen:
            continue
        seen.add(mutated)
        before = source.splitlines()[edit.line - 1].strip()
        after_lines = mutated.splitlines()
        changes.append(Change(edit.operator, edit.line, before,
                              after_lines[edit.line - 1].strip() if edit.line <= len(after_lines) else "",
                              mutated))
    return changes


def _solution_lines(source: str) -> set[int]:
    """Line numbers strictly between the solution markers (every line when there are none)."""
    lines = source.splitlines()
    begins = [n for n, line in enumerate(lines, 1) if line.strip() == BEGIN]
    ends = [n for n, line in enumerate(lines, 1) if line.strip() == END]
    if not begins:
        return set(range(1, len(lines) + 1))
    region = set()
    for begin in begins:
        end = next((n for n in ends if n > begin), len(lines) + 1)
        region |= set(range(begin + 1, end))
    return region


class _Text:
    """Character offsets of AST positions (which count UTF-8 bytes within a line)."""

    def __init__(self, source: str):
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, column: int) -> int:
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        return self.starts[line - 1] + len(text.encode()[:column].decode(errors="ignore"))


class _Context:
    """What the operators need to know about the whole cell: shared arrays and thread-index variables."""

    def __init__(self, tree: ast.AST, text: _Text):
        self.text = text
        self.shared: set[str] = set()
        self.thread_axis: dict[str, str] = {}  # tx -> "x", ty -> "y"
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
            if (isinstance(target, ast.Name) and isinstance(value, ast.Call)
                    and ast.unparse(value.func).endswith("shared.array")):
                self.shared.add(target.id)
            pairs = (zip(target.elts, value.elts, strict=False)
                     if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) else [(target, value)])
            for name, part in pairs:
                axis = _thread_axis(part)
                if isinstance(name, ast.Name) and axis:
                    self.thread_axis[name.id] = axis


def _thread_axis(node: ast.AST) -> str | None:
    """"x" or "y" for `cuda.threadIdx.x` or `.y`, else None."""
    if (isinstance(node, ast.Attribute) and node.attr in AXES and isinstance(node.value, ast.Attribute)
            and node.value.attr == "threadIdx"):
        return node.attr
    return None


def _edits(node: ast.AST, parent: ast.AST | None, context: _Context) -> Iterator[_Edit]:
    """The edits every operator makes at `node` and below, in source order."""
    for operator in _OPERATORS:
        yield from operator(node, parent, context)
    for child in ast.iter_child_nodes(node):
        yield from _edits(child, node, context)


# ------------------------------------------------------------------------------------------- edit helpers

def _replace(operator: str, node: ast.AST, text: str, context: _Context) -> _Edit:
    """Replace an expression's text; one spanning several lines keeps them, in parentheses."""
    extra = node.end_lineno - node.lineno
    if extra:
        text = "(" + text + "\n" * extra + ")"
    start = context.text.offset(node.lineno, node.col_offset)
    end = context.text.offset(node.end_lineno, node.end_col_offset)
    return _Edit(operator, start, end, text, node.lineno)


def _replace_statement(operator: str, node: ast.stmt, context: _Context) -> _Edit:
    """Replace a statement by `pass`, keeping its lines (empty) so later line numbers do not move."""
    start = context.text.offset(node.lineno, node.col_offset)
    end = context.text.offset(node.end_lineno, node.end_col_offset)
    return _Edit(operator, start, end, "pass" + "\n" * (node.end_lineno - node.lineno), node.lineno)


def _replace_head(operator: str, node: ast.stmt, upto: ast.AST, text: str, context: _Context) -> _Edit:
    """Replace a statement's text from its start up to where `upto` begins (an augmented assignment's
    target and operator)."""
    start = context.text.offset(node.lineno, node.col_offset)
    end = context.text.offset(upto.lineno, upto.col_offset)
    return _Edit(operator, start, end, text, node.lineno)


def _plus(node: ast.expr, op: ast.operator) -> str:
    """`node + 1` or `node - 1` as text; a whole-number constant is folded (`tile[0]` into `tile[1]`)."""
    constant = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else node
    if isinstance(constant, ast.Constant) and type(constant.value) is int:
        value = constant.value if constant is node else -constant.value
        return str(value + (1 if isinstance(op, ast.Add) else -1))
    return ast.unparse(ast.BinOp(copy.deepcopy(node), op, ast.Constant(1)))


def _with(node: ast.AST, **fields) -> ast.AST:
    new = copy.deepcopy(node)
    for name, value in fields.items():
        setattr(new, name, value)
    return new


def _index_parts(node: ast.Subscript) -> list[ast.expr]:
    return list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]


def _is_shared_store(node: ast.Subscript, parent: ast.AST | None, context: _Context) -> bool:
    return (isinstance(parent, ast.Assign) and node in parent.targets and isinstance(node.value, ast.Name)
            and node.value.id in context.shared)


def _call_name(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


# ----------------------------------------------------------------------------------------------- operators

def _compare(node, parent, context):
    if isinstance(node, ast.Compare):
        for position, op in enumerate(node.ops):
            if type(op) in FLIPS:
                ops = list(node.ops)
                ops[position] = FLIPS[type(op)]()
                yield _replace("compare", node, ast.unparse(_with(node, ops=ops)), context)


def _index(node, parent, context):
    if not isinstance(node, ast.Subscript):
        return
    for part in _index_parts(node):
        if isinstance(part, ast.Slice):
            bounds = [bound for bound in (part.lower, part.upper) if bound is not None]
        elif isinstance(part, ast.Constant) and not isinstance(part.value, int):
            bounds = []  # None, Ellipsis, a string key
        else:
            bounds = [part]
        for bound in bounds:
            for op in (ast.Add(), ast.Sub()):
                yield _replace("index", bound, _plus(bound, op), context)


def _shrink_loop(node, parent, context):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        args = node.args
        if len(args) == 1:
            half = ast.BinOp(copy.deepcopy(args[0]), ast.FloorDiv(), ast.Constant(2))
            yield _replace("shrink-loop", args[0], ast.unparse(half), context)
        elif len(args) == 3:
            yield _replace("shrink-loop", args[1], _plus(args[1], ast.Sub()), context)
    if isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List)) and len(node.iter.elts) > 1:
        yield _replace("shrink-loop", node.iter, ast.unparse(_with(node.iter, elts=node.iter.elts[:-1])),
                       context)


def _range(node, parent, context):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        for bound in node.args[:2]:
            for op in (ast.Add(), ast.Sub()):
                yield _replace("range", bound, _plus(bound, op), context)


def _swap_index(node, parent, context):
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
        parts = node.slice.elts
        operator = "tile-load" if _is_shared_store(node, parent, context) else "swap-index"
        for i in range(len(parts)):
            for j in range(i + 1, len(parts)):
                if ast.dump(parts[i]) == ast.dump(parts[j]):
                    continue
                swapped = list(parts)
                swapped[i], swapped[j] = swapped[j], swapped[i]
                new = _with(node, slice=ast.Tuple(swapped, ast.Load()))
                yield _replace(operator, node, ast.unparse(new), context)
    if _index_axis(node):
        yield _replace("swap-index", node, ast.unparse(_with(node, attr=AXES[node.attr])), context)
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)) and node.value is not None:
        yield from _swap_axes(node.value, context)


def _index_axis(node: ast.AST) -> str | None:
    """The name (threadIdx, blockIdx, blockDim) of an `<...>.x` or `.y` attribute, else None."""
    if (isinstance(node, ast.Attribute) and node.attr in AXES and isinstance(node.value, ast.Attribute)
            and node.value.attr in INDEX_ATTRIBUTES):
        return node.value.attr
    return None


def _swap_axes(value: ast.expr, context: _Context):
    """One statement's .x and .y swapped together, for each of threadIdx, blockIdx and blockDim that it
    uses with both (`tx, ty = cuda.threadIdx.y, cuda.threadIdx.x`)."""
    used: dict[str, set[str]] = {}
    for node in ast.walk(value):
        if _index_axis(node):
            used.setdefault(_index_axis(node), set()).add(node.attr)
    for name in sorted(name for name, axes in used.items() if axes == set(AXES)):

        class Swap(ast.NodeTransformer):
            def visit_Attribute(self, attribute, name=name):
                if _index_axis(attribute) == name:
                    return _with(attribute, attr=AXES[attribute.attr])
                return self.generic_visit(attribute)

        yield _replace("swap-index", value, ast.unparse(Swap().visit(copy.deepcopy(value))), context)


def _tile_load(node, parent, context):
    """In a store into a shared array, tx and ty swap roles in the value loaded."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript)
            and _is_shared_store(node.targets[0], node, context)):
        return
    if set(context.thread_axis.values()) != {"x", "y"}:
        return
    by_axis = {axis: name for name, axis in context.thread_axis.items()}

    class Swap(ast.NodeTransformer):
        def visit_Name(self, name):
            axis = context.thread_axis.get(name.id)
            return ast.Name(by_axis[AXES[axis]], name.ctx) if axis else name

        def visit_Attribute(self, attribute):
            axis = _thread_axis(attribute)
            return _with(attribute, attr=AXES[axis]) if axis else self.generic_visit(attribute)

    swapped = Swap().visit(copy.deepcopy(node.value))
    if ast.dump(swapped) != ast.dump(node.value):
        yield _replace("tile-load", node.value, ast.unparse(swapped), context)


def _drop_sync(node, parent, context):
    if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in SYNCS):
        yield _replace_statement("drop-sync", node, context)


def _guard(node, parent, context):
    if isinstance(node, ast.If):
        yield _replace("guard", node.test, "True", context)
    if isinstance(node, ast.IfExp):
        yield _replace("guard", node, ast.unparse(node.body), context)
    if isinstance(node, (ast.If, ast.IfExp)) and isinstance(node.test, ast.BoolOp) and isinstance(
            node.test.op, ast.And):
        values = node.test.values
        for position in range(len(values)):
            rest = values[:position] + values[position + 1:]
            new = rest[0] if len(rest) == 1 else _with(node.test, values=rest)
            yield _replace("guard", node.test, ast.unparse(new), context)
    if isinstance(node, ast.Call) and any(keyword.arg == "mask" for keyword in node.keywords):
        kept = [keyword for keyword in node.keywords if keyword.arg != "mask"]
        yield _replace("guard", node, ast.unparse(_with(node, keywords=kept)), context)


def _drop_guarded(node, parent, context):
    if isinstance(node, ast.If) and not node.orelse and any(
            isinstance(op, ORDERINGS) for part in ast.walk(node.test) if isinstance(part, ast.Compare)
            for op in part.ops):
        yield _replace_statement("drop-guarded", node, context)


def _float64(node, parent, context):
    if isinstance(node, ast.Name) and node.id == "float32":
        yield _replace("float64", node, "np.float64", context)
    elif isinstance(node, ast.Attribute) and node.attr == "float32":
        yield _replace("float64", node, ast.unparse(_with(node, attr="float64")), context)
    elif isinstance(node, ast.Constant) and node.value == "float32":
        yield _replace("float64", node, repr("float64"), context)


def _reduction(node, parent, context):
    if isinstance(node, ast.Call):
        name = _call_name(node)
        func = node.func
        is_atomic = isinstance(func, ast.Attribute) and ast.unparse(func.value).endswith("atomic")
        if is_atomic and name in ATOMICS:
            yield _replace("reduction", func, ast.unparse(_with(func, attr=ATOMICS[name])), context)
        elif name in OPPOSITES or (name == "sum" and isinstance(func, ast.Attribute)):
            other = OPPOSITES.get(name, "max")
            new = _with(func, attr=other) if isinstance(func, ast.Attribute) else ast.Name(other, ast.Load())
            yield _replace("reduction", func, ast.unparse(new), context)
    if isinstance(node, ast.AugAssign) and type(node.op) in AUGMENTED:
        for op in AUGMENTED[type(node.op)]:
            head = ast.unparse(ast.AugAssign(copy.deepcopy(node.target), op(), ast.Constant(0)))[:-1]
            yield _replace_head("reduction", node, node.value, head, context)
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = ast.unparse(node.targets[0])
        if any(ast.unparse(part) == target for part in ast.walk(node.value)
               if isinstance(part, (ast.Name, ast.Subscript))):
            for part in ast.walk(node.value):
                if isinstance(part, ast.BinOp) and isinstance(part.op, (ast.Add, ast.Sub)):
                    op = ast.Sub() if isinstance(part.op, ast.Add) else ast.Add()
                    yield _replace("reduction", part, ast.unparse(_with(part, op=op)), context)


_OPERATORS = (_compare, _index, _shrink_loop, _range, _swap_index, _tile_load, _drop_sync, _guard,
              _drop_guarded, _float64, _reduction)
