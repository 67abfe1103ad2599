"""The trusted source notebooks (``solutions/``): their locked cells, graded tasks and check calls.

A check cell's source is one or more calls ``tasks.check_<name>(<learner names>...)``, the hidden ones
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` with ``seeds=(...)``. Everything the grader
runs and judges comes from here, never from a submission's check cells.
"""

from __future__ import annotations

import ast
import importlib
import json
from dataclasses import dataclass
from pathlib import Path

from .recording import Step, planned_steps

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
CHECK_MODULE_ALIAS = "tasks"


class SourceError(Exception):
    """A source notebook the grader cannot use as written."""


@dataclass(frozen=True)
class CheckCall:
    """One call in a check cell, e.g. ``tasks.check_grayscale(grayscale, launch_grayscale, seeds=(1, 2))``."""

    function: str
    names: tuple[str, ...]  # the learner's objects, by name, in order
    keywords: dict  # literal keyword arguments (seeds)
    hidden: bool
    steps: tuple[Step, ...]  # the Tasks it checks, in order


@dataclass(frozen=True)
class GradedTask:
    """A graded check cell: its points, its calls (visible first) and the solution cells it grades."""

    grade_id: str
    points: float
    calls: tuple[CheckCall, ...]
    solution_ids: tuple[str, ...]  # grade_ids of the solution cells since the previous check cell
    problem: str = ""  # why this check cannot be graded here (empty when it can)


@dataclass(frozen=True)
class SourceCell:
    grade_id: str | None
    source: str
    locked: bool
    graded: bool


@dataclass(frozen=True)
class Assignment:
    name: str  # the notebook's file stem, e.g. "01_kernels_in_python"
    module: str  # the checks' module, e.g. "course.tasks.part01"
    cells: tuple[SourceCell, ...]  # code cells, in order
    tasks: tuple[GradedTask, ...]

    @property
    def grade_ids(self) -> set[str]:
        return {cell.grade_id for cell in self.cells if cell.grade_id}

    @property
    def max_points(self) -> float:
        return sum(task.points for task in self.tasks)


def cell_source(cell: dict) -> str:
    """A notebook cell's source as one string (notebooks may store it as a list of lines)."""
    source = cell.get("source", "")
    return "".join(map(str, source)) if isinstance(source, list) else str(source)


def _checks_module(cells: list[SourceCell]) -> str:
    """The module imported ``as tasks`` by the locked cells, e.g. ``course.tasks.part01``."""
    for cell in cells:
        if not cell.locked or cell.graded:
            continue
        for node in ast.walk(ast.parse(cell.source)):
            for alias in getattr(node, "names", ()):
                if alias.asname != CHECK_MODULE_ALIAS:
                    continue
                if isinstance(node, ast.ImportFrom):
                    return f"{node.module}.{alias.name}"
                return alias.name
    raise SourceError(f"no locked cell imports the checks `as {CHECK_MODULE_ALIAS}`")


def _parse_calls(source: str) -> list[tuple[str, tuple[str, ...], dict, bool]]:
    """(function, learner names, keywords, hidden) for each ``tasks.check_*(...)`` call in a check cell."""
    lines = source.splitlines()
    begin = next((i + 1 for i, line in enumerate(lines) if line.strip() == HIDDEN_BEGIN), None)
    end = next((i + 1 for i, line in enumerate(lines) if line.strip() == HIDDEN_END), len(lines) + 1)
    calls = []
    for statement in ast.parse(source).body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        function = getattr(call, "func", None)
        module = getattr(function, "value", None)
        if not (isinstance(function, ast.Attribute) and getattr(module, "id", "") == CHECK_MODULE_ALIAS):
            raise SourceError(f"line {statement.lineno} of a check cell is not a `tasks.check_*(...)` call")
        if not all(isinstance(arg, ast.Name) for arg in call.args):
            raise SourceError(f"{function.attr}: pass the learner's objects by name")
        keywords = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}
        hidden = begin is not None and begin < statement.lineno < end
        calls.append((function.attr, tuple(arg.id for arg in call.args), keywords, hidden))
    return calls


def _graded_task(module, cell: dict, solution_ids: list[str]) -> GradedTask:
    meta = cell["metadata"]["nbgrader"]
    grade_id, points = meta["grade_id"], float(meta.get("points", 0))
    try:
        calls = tuple(CheckCall(function, names, keywords, hidden,
                                planned_steps(module, function, len(names), keywords))
                      for function, names, keywords, hidden in _parse_calls(cell_source(cell)))
    except Exception as error:  # noqa: BLE001 (a check this mode cannot list is reported, not fatal)
        return GradedTask(grade_id, points, (), tuple(solution_ids),
                          problem=f"classroom mode cannot read this check ({type(error).__name__}: {error})")
    visible_first = tuple(sorted(calls, key=lambda call: call.hidden))
    return GradedTask(grade_id, points, visible_first, tuple(solution_ids))


def load_assignment(path: Path) -> Assignment:
    """Read one source notebook and list its checks (importing its checks module)."""
    notebook = json.loads(path.read_text())
    code = [cell for cell in notebook["cells"] if cell.get("cell_type") == "code"]
    cells = []
    for cell in code:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        cells.append(SourceCell(meta.get("grade_id"), cell_source(cell), bool(meta.get("locked")),
                                bool(meta.get("grade"))))
    module = _checks_module(cells)
    checks = importlib.import_module(module)
    tasks, solution_ids = [], []
    for cell, parsed in zip(code, cells, strict=True):
        if parsed.graded:
            tasks.append(_graded_task(checks, cell, solution_ids))
            solution_ids = []
        elif cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            solution_ids.append(parsed.grade_id)
    return Assignment(path.stem, module, tuple(cells), tuple(tasks))


def load_assignments(source: Path) -> tuple[dict[str, Assignment], dict[str, str]]:
    """Every source notebook in a folder, by name, and the problems of those that cannot be loaded."""
    assignments, problems = {}, {}
    for path in sorted(source.glob("*.ipynb")):
        try:
            assignments[path.stem] = load_assignment(path)
        except Exception as error:  # noqa: BLE001 (one broken source must not stop the others)
            problems[path.stem] = f"{type(error).__name__}: {error}"
    return assignments, problems
