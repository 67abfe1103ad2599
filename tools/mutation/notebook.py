"""The code cells of a solution notebook with their nbgrader roles, and the mutants of its solution cells."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .mutator import Mutant, mutants_of_cell


@dataclass(frozen=True)
class Cell:
    """One code cell: its index among all cells, source, grade_id, and whether it is a solution or graded."""

    index: int
    source: str
    grade_id: str | None
    solution: bool
    graded: bool


def code_cells(path: Path) -> list[Cell]:
    """The code cells of a notebook, in order (read as plain JSON: nbformat is not needed for this)."""
    cells = json.loads(Path(path).read_text())["cells"]
    found = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        found.append(Cell(index, source, meta.get("grade_id"), bool(meta.get("solution")),
                          bool(meta.get("grade"))))
    return found


def task_of(cells: list[Cell], solution: Cell) -> str:
    """The grade_id of the check cell that tests a solution cell: the first graded cell after it."""
    return next((c.grade_id for c in cells if c.graded and c.index > solution.index), "(no check cell)")


def notebook_mutants(path: Path) -> list[Mutant]:
    """Every mutant of every solution cell of one notebook, cell by cell in source order."""
    mutants = []
    for cell in code_cells(path):
        if cell.solution and not cell.graded:
            mutants += mutants_of_cell(Path(path).stem, cell.index, cell.grade_id or f"cell {cell.index + 1}",
                                       cell.source)
    return mutants
