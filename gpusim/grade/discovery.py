"""Finding the submitted notebooks in a folder, and whose they are.

Two layouts are understood: one folder per learner (``alice/03_numba_cuda.ipynb``, subfolders allowed) and
nbgrader's ``submitted/<learner>/<assignment>/<notebook>.ipynb``. The learner is the first folder under the
root (under ``submitted/`` for nbgrader). Notebooks directly in the root belong to nobody and are listed
apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

NBGRADER_FOLDER = "submitted"


@dataclass(frozen=True)
class Submission:
    learner: str
    path: Path

    @property
    def label(self) -> str:
        return f"{self.learner}/{self.path.name}"


def _is_hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)  # .ipynb_checkpoints, .git


def find_submissions(root: Path) -> tuple[list[Submission], list[Path]]:
    """The submissions under ``root``, by learner and path, and the notebooks outside learner folders."""
    submissions, orphans = [], []
    for path in sorted(root.rglob("*.ipynb")):
        relative = path.relative_to(root)
        if _is_hidden(relative):
            continue
        parts = relative.parts[1:] if relative.parts[0] == NBGRADER_FOLDER else relative.parts
        if len(parts) < 2:
            orphans.append(path)
        else:
            submissions.append(Submission(parts[0], path))
    return sorted(submissions, key=lambda s: (s.learner, str(s.path))), orphans
