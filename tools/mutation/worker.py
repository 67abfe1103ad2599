"""A worker process: runs one solution notebook's code cells once (the baseline), then each mutant.

A mutant run starts from the namespace as it was just before the mutated cell, runs the mutated cell under a
file name of its own (gpusim, the kernel-source reader and the compile gate cache by code and file name), then
every later code cell that reads a name the mutated cell binds (directly or through a cell run after it),
and records the graded check cells that fail. The other cells cannot see the change: graded cells before the
mutated one, or that use none of its names, keep their baseline outcome (a pass).

While a check cell runs, the course's ``check`` and ``check_function`` are wrapped to record their arguments
(the task and the learner's functions), so that :mod:`.battery` can rerun the task on more cases.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import linecache
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .notebook import Cell, code_cells

ROOT = Path(__file__).resolve().parents[2]
CHECK_MODULES = "course.tasks"
RECORDED = ("check", "check_function")  # the course's check entry points, in course.tasks.common
HIDDEN_TESTS = "### BEGIN HIDDEN TESTS"


@dataclass
class CheckCall:
    """One call of a recorded check entry point: its name and bound arguments (task, learner, call...)."""

    kind: str
    arguments: dict


@dataclass
class Outcome:
    """What one run of a notebook's cells did: the graded cells that failed (with the first line of their
    error) and the check calls each graded cell made."""

    failed: dict[str, str] = field(default_factory=dict)
    hidden: list[str] = field(default_factory=list)  # graded cells that failed only in their hidden tests
    calls: dict[str, list[CheckCall]] = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)  # other cells that raised, by cell index


_recording: list[CheckCall] | None = None
_originals: dict[str, tuple] = {}  # entry point name -> (the course's function, its recording wrapper)


def _wrap(kind: str, original):
    signature = inspect.signature(original)

    def recorded(*args, **kwargs):
        if _recording is not None:
            try:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                _recording.append(CheckCall(kind, dict(bound.arguments)))
            except TypeError:
                pass  # the original raises the same error below
        return original(*args, **kwargs)

    recorded.__wrapped__ = original
    return recorded


def _install_recorders() -> None:
    """Wrap the check entry points wherever a course.tasks module holds them (idempotent)."""
    common = sys.modules.get(f"{CHECK_MODULES}.common")
    if common is None:
        return
    if not _originals:
        for name in RECORDED:
            if callable(getattr(common, name, None)):
                _originals[name] = (getattr(common, name), _wrap(name, getattr(common, name)))
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name + ".").startswith(CHECK_MODULES + "."):
            continue
        for original, wrapper in _originals.values():
            for attribute, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attribute, wrapper)


def _failed_line(error: BaseException, filename: str) -> int:
    """The line of the cell `filename` where the error came out of (0 if it did not pass through it)."""
    line, trace = 0, error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == filename:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def _hidden_start(source: str) -> float:
    """The line of a check cell's `### BEGIN HIDDEN TESTS` marker (infinity when it has none)."""
    lines = [n for n, line in enumerate(source.splitlines(), 1) if line.strip() == HIDDEN_TESTS]
    return lines[0] if lines else float("inf")


def first_line(error: BaseException) -> str:
    """The error's type and the start of its message (three lines at most, on one line)."""
    text = " ".join(str(error).strip().splitlines()[:3])
    return f"{type(error).__name__}: {text[:500]}"


class NotebookRun:
    """One solution notebook, run once, remembering the namespace before each solution cell and the names
    each cell (re)defined."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.cells: list[Cell] = code_cells(self.path)
        self.snapshots: dict[int, dict] = {}  # cell index -> namespace before that solution cell
        self.defined: dict[int, dict] = {}  # cell index -> the names it bound, with their values
        self.baseline = Outcome()

    def filename(self, cell: Cell, mutant_id: str | None = None) -> str:
        suffix = f" mutant {mutant_id}" if mutant_id else ""
        return f"<{self.path.stem} cell {cell.index + 1}{suffix}>"

    def run_baseline(self) -> Outcome:
        """Run every code cell in order."""
        namespace: dict = {"__name__": "__main__"}
        outcome = Outcome()
        for cell in self.cells:
            if cell.solution:
                self.snapshots[cell.index] = dict(namespace)
            before = dict(namespace)
            self._run_cell(cell, self.filename(cell), namespace, outcome)
            self.defined[cell.index] = {name: value for name, value in namespace.items()
                                        if name not in before or before[name] is not value}
        self.baseline = outcome
        return outcome

    def run_mutant(self, cell_index: int, source: str, mutant_id: str) -> tuple[Outcome, str]:
        """Run the mutated cell, then every later cell that uses a name it (or a cell run after it) binds; a
        later cell that uses none of them would do what it did in the baseline, so it is not run and its
        names keep their baseline values. Returns the outcome and the mutated cell's file name."""
        position = next(i for i, cell in enumerate(self.cells) if cell.index == cell_index)
        mutated = self.cells[position]
        namespace = dict(self.snapshots[cell_index])
        filename = self.filename(mutated, mutant_id)
        outcome = Outcome()
        replaced = Cell(mutated.index, source, mutated.grade_id, mutated.solution, mutated.graded)
        self._run_cell(replaced, filename, namespace, outcome)
        touched = set(self.defined[cell_index]) | _bound_names(source)
        for cell in self.cells[position + 1:]:
            if _loaded_names(cell.source) & touched:
                self._run_cell(cell, self.filename(cell), namespace, outcome)
                touched |= set(self.defined[cell.index])
            else:
                namespace.update(self.defined[cell.index])
        return outcome, filename

    def _run_cell(self, cell: Cell, filename: str, namespace: dict, outcome: Outcome) -> None:
        """Run one cell in the notebook's folder, its output discarded; a graded cell's failure and its check
        calls, or another cell's error, go into `outcome`."""
        global _recording
        if cell.source.lstrip().startswith(("%", "!")):
            return
        linecache.cache[filename] = (len(cell.source), None, cell.source.splitlines(True), filename)
        _install_recorders()
        _recording = [] if cell.graded else None
        previous = Path.cwd()
        os.chdir(self.path.parent)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(cell.source, filename, "exec"), namespace)
        except Exception as error:  # noqa: BLE001 - every outcome is recorded, none is fatal
            if cell.graded:
                outcome.failed[cell.grade_id] = first_line(error)
                if _failed_line(error, filename) > _hidden_start(cell.source):
                    outcome.hidden.append(cell.grade_id)
            else:
                outcome.errors[cell.index] = first_line(error)
        finally:
            os.chdir(previous)
            if cell.graded:
                outcome.calls[cell.grade_id] = _recording or []
            _recording = None
            _close_figures()


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError:
        return ast.Module([], [])


def _bound_names(source: str) -> set[str]:
    """Names a cell binds at its top level: assignments, loop targets, imports, functions and classes."""
    names = set()

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if not isinstance(node, _SCOPES):
            for child in ast.iter_child_nodes(node):
                visit(child)

    visit(_parse(source))
    return names


def _loaded_names(source: str) -> set[str]:
    """Global names a cell reads, in its own code or in the functions it defines (a function's parameters
    and assigned names are its own, not globals)."""
    names = set()

    def visit(node, local: frozenset):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            own = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
            own |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
            body = node.body if isinstance(node.body, list) else [node.body]
            own |= {n.id for part in body for n in ast.walk(part)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            for outer in [*getattr(node, "decorator_list", []), *arguments.defaults, *arguments.kw_defaults]:
                if outer is not None:
                    visit(outer, local)
            for part in body:
                visit(part, local | own)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
            names.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    visit(_parse(source), frozenset())
    return names


def _close_figures() -> None:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


# ----------------------------------------------------------------------------------------- the process

def serve(connection, settings: dict) -> None:
    """The worker's loop: ("prepare", path) runs a notebook's baseline; ("mutant", mutant) runs one mutant
    and, when it survives and settings["battery"] is on, its equivalence battery. Replies are plain dicts."""
    os.setsid()  # its own process group: a timeout kills it together with the compile gate's helper
    os.environ.setdefault("COURSE_MODE", "cpu")
    os.environ.setdefault("MPLBACKEND", "Agg")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    run: NotebookRun | None = None
    while True:
        try:
            kind, payload = connection.recv()
        except EOFError:
            return
        if kind == "prepare":
            start = time.perf_counter()
            run = NotebookRun(Path(payload))
            outcome = run.run_baseline()
            errors = {str(index): error for index, error in outcome.errors.items()}
            seconds = time.perf_counter() - start
            connection.send({"failed": outcome.failed, "errors": errors, "seconds": seconds})
        elif kind == "mutant":
            _serve_mutant(connection, run, payload, settings)


def _serve_mutant(connection, run: NotebookRun, mutant: dict, settings: dict) -> None:
    start = time.perf_counter()
    outcome, filename = run.run_mutant(mutant["cell"], mutant["source"], mutant["id"])
    reply = {"failed": outcome.failed, "hidden": outcome.hidden, "seconds": time.perf_counter() - start,
             "cell_error": outcome.errors.get(mutant["cell"])}
    connection.send(reply)
    if outcome.failed or not settings.get("battery"):
        return
    from .battery import judge_equivalence

    start = time.perf_counter()
    verdict = judge_equivalence(run, outcome, mutant, filename, settings)
    connection.send({**verdict, "seconds": time.perf_counter() - start})
