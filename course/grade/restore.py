"""Reading a submission (never writing it) and choosing the cells its worker runs.

Like nbgrader's checksums, every locked cell (the setup cell with its imports) is compared with the trusted
source by grade_id: an edited or deleted one is put back as the source has it, and the feedback says so.
Check cells are never taken from the submission: the grader runs the source's calls, hidden ones included,
itself. Every other code cell runs as the learner wrote it, in the learner's order.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from . import wire
from .assignments import HIDDEN_BEGIN, HIDDEN_END, Assignment, SourceCell, cell_source

MAX_VALUES = 100_000  # JSON values in a notebook (ours hold about 500 without outputs)
MAX_DEPTH = 64
MAX_CELLS = 1_000  # ours have about 30


class Unreadable(Exception):
    """A submission that cannot be graded as a whole: the message says why, for the learner."""


@dataclass(frozen=True)
class Prepared:
    """What the worker runs for one submission, and what the grader changed on the way."""

    cells: tuple[tuple[str, str], ...]  # (label, source) in order
    present: frozenset[str]  # grade_ids found in the submission
    notes: tuple[str, ...]  # restored cells, for the feedback


def read_regular_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``, opened without following a symbolic link and
    without waiting on a FIFO; Unreadable for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise Unreadable(f"`{path.name}` cannot be opened as a plain file ({error.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unreadable(f"`{path.name}` is not a regular file")
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise Unreadable(f"`{path.name}` is larger than the limit of {max_bytes / 2**20:.0f} MiB per "
                         f"notebook")
    return data


def read_notebook(path: Path, max_bytes: int) -> list[dict]:
    """The cells of a submitted notebook; Unreadable when it is not a Jupyter notebook."""
    return parse_notebook(read_regular_file(path, max_bytes))


def parse_notebook(data: bytes) -> list[dict]:
    """The cells of a notebook's bytes; Unreadable when they are not a Jupyter notebook, or one larger than
    any notebook of the course in values, nesting or cells. The values and the nesting are measured in one
    pass over the bytes (:func:`.wire.measure`) before any of it is parsed, so the memory the parsed notebook
    takes is bounded too (32 MiB of empty cells would take a GiB)."""
    shape = wire.measure(data)
    if shape.depth > MAX_DEPTH:
        raise Unreadable(f"the file cannot be read as notebook JSON (it is nested {shape.depth} deep)")
    if shape.values > MAX_VALUES:
        raise Unreadable(f"the notebook holds about {shape.values} JSON values (cells, lines, outputs), more "
                         f"than the grader reads (at most {MAX_VALUES}): clear its outputs, delete empty "
                         f"cells and hand it in again")
    try:
        notebook = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise Unreadable(f"the file cannot be read as notebook JSON ({str(error)[:200]})") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise Unreadable("the file is JSON but not a Jupyter notebook (it has no list of cells)")
    if len(cells) > MAX_CELLS:
        raise Unreadable(f"the notebook has {len(cells)} cells, more than the grader reads (at most "
                         f"{MAX_CELLS}): delete empty cells and hand it in again")
    return [cell for cell in cells if isinstance(cell, dict)]


def grade_id(cell: dict) -> str | None:
    meta = cell.get("metadata")
    nbgrader = meta.get("nbgrader") if isinstance(meta, dict) else None
    value = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
    return value if isinstance(value, str) else None


def _distinctive_ids(assignments: dict[str, Assignment]) -> dict[str, set[str]]:
    """Each assignment's grade_ids that no other assignment uses (``setup`` is everywhere)."""
    counts = Counter(i for assignment in assignments.values() for i in assignment.grade_ids)
    return {name: {i for i in assignment.grade_ids if counts[i] == 1}
            for name, assignment in assignments.items()}


def match_assignment(path: Path, cells: list[dict], assignments: dict[str, Assignment]) -> Assignment:
    """The assignment a submission belongs to: by file name, else by its cells' grade_ids.

    A notebook named after one assignment that holds another's cells is refused (Unreadable).
    """
    ids = {grade_id(cell) for cell in cells} - {None}
    overlaps = {name: len(ids & distinctive) for name, distinctive in _distinctive_ids(assignments).items()}
    best = max(overlaps, key=lambda name: overlaps[name], default=None)
    named = assignments.get(path.stem)
    if named is not None:
        if overlaps[named.name] == 0 and best is not None and overlaps[best] > 0:
            raise Unreadable(f"this notebook holds the cells of assignment {best}, not of {named.name}")
        return named
    if best is None or overlaps[best] == 0:
        raise Unreadable(f"`{path.name}` matches no assignment, by its name or by its cells")
    return assignments[best]


def _as_released(cell: SourceCell) -> str:
    """A source cell as learners receive it: a check cell without its hidden block."""
    lines, kept, hiding = cell.source.splitlines(), [], False
    for line in lines:
        hiding = hiding or line.strip() == HIDDEN_BEGIN
        if not hiding:
            kept.append(line)
        hiding = hiding and line.strip() != HIDDEN_END
    return "\n".join(kept).strip()


def prepare(assignment: Assignment, cells: list[dict]) -> Prepared:
    """The cells to run: the learner's code cells, locked ones restored, check cells left out."""
    source_cells = {cell.grade_id: cell for cell in assignment.cells if cell.grade_id}
    locked = [cell for cell in assignment.cells if cell.locked and not cell.graded]
    present = {grade_id(cell) for cell in cells if cell.get("cell_type") == "code"} - {None}
    notes = [f"The locked cell `{cell.grade_id}` was missing; the grader ran the source's version."
             for cell in locked if cell.grade_id not in present]
    run = [(f"locked cell {cell.grade_id}", cell.source) for cell in locked if cell.grade_id not in present]
    for index, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source, trusted = cell_source(cell), source_cells.get(grade_id(cell))
        edited = trusted is not None and source.strip() not in (_as_released(trusted), trusted.source.strip())
        if trusted is not None and trusted.locked and edited:
            notes.append(f"The locked cell `{trusted.grade_id}` had been edited; the grader restored it from "
                         f"the source before grading.")
        if trusted is not None and trusted.graded:
            continue
        if trusted is not None and trusted.locked:
            source = trusted.source
        run.append((f"cell {index}", source))
    return Prepared(tuple(run), frozenset(present), tuple(notes))
