"""The reference solutions, read from the course's solution notebooks: the single source of each method.

``load(solution)`` runs, in a namespace of its own, the setup cells of ``solutions/<notebook>.ipynb`` (locked
cells that are neither solutions nor checks) and its solution cells (``solution: true``) up to the last one
the task needs, and returns the objects the task names. "Try it" cells and check cells never run. These
notebooks are the course's own, trusted code; nothing here reads a learner's notebook, and a grader's
learner workers never see ``solutions/``. Where the notebook is missing (a learner who deleted
``solutions/``), :class:`ReferenceMissing` says so.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import json
import linecache
import threading
from pathlib import Path

from .common import REPOSITORY

SOLUTIONS = REPOSITORY / "solutions"
_LOADING = threading.Lock()


class ReferenceMissing(Exception):
    """The reference solution cannot be loaded (its notebook is missing or does not define the name)."""


def _defined_names(source: str) -> set[str]:
    """Names a cell defines at top level (functions, classes, assignments)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names


def _cells(path: Path) -> list[tuple[int, str, dict]]:
    """(index, source, nbgrader metadata) of the notebook's code cells."""
    notebook = json.loads(path.read_text())
    return [(index, "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"],
             cell.get("metadata", {}).get("nbgrader", {}))
            for index, cell in enumerate(notebook["cells"]) if cell["cell_type"] == "code"]


@functools.cache
def _namespace(notebook: str, names: frozenset[str]) -> dict:
    """The namespace after the setup cells and the solution cells up to the last one defining ``names``."""
    path = SOLUTIONS / f"{notebook}.ipynb"
    if not path.is_file():
        raise ReferenceMissing(f"solutions/{notebook}.ipynb, the course's reference solution, is not here "
                               f"(restore it with `git checkout solutions/`)")
    cells = _cells(path)
    wanted = set(names)
    chosen = []
    for index, source, meta in cells:
        if meta.get("solution"):
            chosen.append((index, source))
            wanted -= _defined_names(source)
            if not wanted:
                break
        elif meta.get("locked") and not meta.get("grade"):
            chosen.append((index, source))
    if wanted:
        raise ReferenceMissing(f"solutions/{notebook}.ipynb defines no {', '.join(sorted(wanted))}")
    namespace = {"__name__": f"reference_{notebook}"}
    with contextlib.redirect_stdout(io.StringIO()):  # utils announces its mode
        for index, source in chosen:
            filename = str(path.with_name(f"{path.name}#cell{index + 1}"))
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            exec(compile(source, filename, "exec"), namespace)
    return namespace


def load(solution) -> dict:
    """The objects a :class:`course.tasks.contract.Solution` names, by role, built as the task runs them."""
    roles = dict(solution.names)
    with _LOADING:
        namespace = _namespace(solution.notebook, frozenset(roles.values()))
    objects = {role: namespace[name] for role, name in roles.items()}
    return solution.build(objects) if solution.build else objects
