"""Finding the submitted notebooks in a folder, whose they are, and which one counts.

Two layouts are understood: one folder per learner (``alice/03_numba_cuda.ipynb``, subfolders allowed) and
nbgrader's ``submitted/<learner>/<assignment>/<notebook>.ipynb``. Every learner folder found is reported,
even one with nothing gradable in it. Notebooks directly in the root belong to nobody and are listed apart.

The input rules (nothing here opens a file that is not a regular one):

* only regular files are graded: a symbolic link, FIFO, device or socket named ``*.ipynb`` is refused, with
  the reason, and never opened;
* a notebook larger than the size limit is refused;
* a notebook whose name starts with a dot (or that sits in a dot-folder such as ``.ipynb_checkpoints``) is not
  graded; when it is all a learner has for an assignment, the row says so;
* one notebook per learner and assignment: when there are several, the newest (modification time) counts and
  the feedback lists the others;
* a learner's folder is searched without recursion, at most :data:`MAX_DEPTH` folders deep and
  :data:`MAX_SCANNED` entries in all; what lies beyond, or cannot be listed, is reported, never fatal.

Names are kept as the file system gives them (an undecodable byte as a surrogate); :mod:`.text` makes them
safe wherever they are written.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .assignments import Assignment
from .restore import Unreadable, match_assignment, read_notebook

NBGRADER_FOLDER = "submitted"
SUFFIX = ".ipynb"
MAX_ENTRIES = 500  # notebooks looked at per learner
MAX_DEPTH = 8  # folders below a learner's folder that are searched
MAX_SCANNED = 20_000  # entries of a learner's folders looked at, notebooks or not
MAX_SKIPPED_SHOWN = 3
KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
         (stat.S_ISDIR, "a folder"))


@dataclass(frozen=True)
class Entry:
    """A name ending in .ipynb found in a learner's folder, as ``lstat`` saw it."""

    path: Path
    mode: int
    size: int
    mtime_ns: int

    @property
    def kind(self) -> str:
        """"" for a regular file, else what it is, in words."""
        if stat.S_ISREG(self.mode):
            return ""
        return next((words for test, words in KINDS if test(self.mode)), "not a regular file")


@dataclass(frozen=True)
class Learner:
    name: str
    notebooks: tuple[Entry, ...] = ()  # regular or not; dot-named ones apart
    dotted: tuple[Entry, ...] = ()
    problem: str = ""  # the learner's folder itself cannot be graded
    skipped: tuple[str, ...] = ()  # parts of the folder that were not searched, and why


@dataclass(frozen=True)
class Submission:
    learner: str
    path: Path
    assignment: str = ""  # the assignment it was matched to, by name or by its cells
    notes: tuple[str, ...] = ()  # other notebooks of the same assignment that did not count

    @property
    def label(self) -> str:
        return f"{self.learner}/{self.path.name}"


@dataclass(frozen=True)
class Refusal:
    """A row without grading: ``assignment`` is an assignment's name, or a file's stem when none matched."""

    learner: str
    assignment: str
    status: str  # "error" or "missing"
    reason: str


@dataclass
class Selection:
    submissions: list[Submission] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)


def _entry(path: Path) -> Entry:
    info = os.lstat(path)
    return Entry(path, info.st_mode, info.st_size, info.st_mtime_ns)


def _listing(folder: Path, budget: int) -> tuple[list[os.DirEntry], bool]:
    """At most ``budget`` entries of a folder, sorted by name, and whether there were more."""
    entries = []
    with os.scandir(folder) as listing:
        for entry in listing:
            if len(entries) == budget:
                return sorted(entries, key=lambda e: e.name), True
            entries.append(entry)
    return sorted(entries, key=lambda e: e.name), False


def _walk(folder: Path) -> tuple[list[Path], list[str]]:
    """The ``*.ipynb`` names under a learner's folder, depth first in name order, without following links,
    entering dot-folders or recursing; and what was not searched, in words (relative to the folder)."""
    found, skipped, scanned = [], [], 0
    pending = [(folder, 0)]
    while pending:
        current, depth = pending.pop()
        where = current.relative_to(folder)
        try:
            entries, more = _listing(current, MAX_SCANNED - scanned)
        except OSError as error:
            skipped.append(f"the folder `{where}` could not be listed ({error.strerror})")
            continue
        scanned += len(entries)
        folders = []
        for entry in entries:
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_folder = False
            if is_folder and not entry.name.startswith("."):
                folders.append(Path(entry.path))
            elif not is_folder and entry.name.endswith(SUFFIX):
                found.append(Path(entry.path))
        if more:
            skipped.append(f"the search stopped in `{where}`, after {MAX_SCANNED} entries in all")
            break
        if folders and depth == MAX_DEPTH:
            skipped.append(f"the folders in `{where}` lie more than {MAX_DEPTH} levels deep and were not "
                           f"searched")
        elif folders:
            pending += [(path, depth + 1) for path in reversed(folders)]
    if len(skipped) > MAX_SKIPPED_SHOWN:
        skipped[MAX_SKIPPED_SHOWN:] = [f"and {len(skipped) - MAX_SKIPPED_SHOWN} more parts were not searched"]
    return found, skipped


def one_learner(folder: Path, name: str) -> Learner:
    """The notebooks of one learner's folder (never following a symbolic link)."""
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        kind = _entry(folder).kind
        return Learner(name, problem=f"`{name}` is {kind}, not a folder: hand in a folder of notebooks")
    notebooks, dotted = [], []
    found, skipped = _walk(folder)
    for path in found[:MAX_ENTRIES]:
        try:
            entry = _entry(path)
        except OSError:
            continue  # gone since the folder was listed
        (dotted if path.name.startswith(".") else notebooks).append(entry)
    return Learner(name, tuple(notebooks), tuple(dotted), skipped=tuple(skipped))


def find_learners(root: Path) -> tuple[list[Learner], list[Path]]:
    """Every learner folder under ``root``, with its notebooks, and the notebooks outside learner folders."""
    learners, orphans = {}, []
    tops = [(root, entry) for entry in sorted(os.listdir(root))]
    nbgrader = root / NBGRADER_FOLDER
    if os.path.isdir(nbgrader) and not os.path.islink(nbgrader):
        tops = [top for top in tops if top[1] != NBGRADER_FOLDER]
        tops += [(nbgrader, entry) for entry in sorted(os.listdir(nbgrader))]
    for parent, name in tops:
        path = parent / name
        mode = os.lstat(path).st_mode
        if name.startswith(".") or (stat.S_ISREG(mode) and not name.endswith(SUFFIX)):
            continue  # hidden entries, and files such as a class list beside the learners' folders
        if name.endswith(SUFFIX) and not stat.S_ISDIR(mode):
            orphans.append(path)
        elif name not in learners:  # a folder, or a link or FIFO standing where a learner's folder would
            learners[name] = one_learner(path, name)
    return [learners[name] for name in sorted(learners)], orphans


def _assignment_of(entry: Entry, assignments: dict[str, Assignment], max_bytes: int) -> Assignment | str:
    """The assignment a regular notebook belongs to (by name, else by its cells), or why it has none."""
    named = assignments.get(entry.path.stem)
    if named is not None:
        return named
    try:
        return match_assignment(entry.path, read_notebook(entry.path, max_bytes), assignments)
    except Unreadable as problem:
        return str(problem)


def _refusal(entry: Entry, max_bytes: int) -> str:
    """Why a notebook is not graded without opening it ("" when it may be opened)."""
    if entry.kind:
        return f"`{entry.path.name}` is {entry.kind}, not a notebook file: hand in the file itself"
    if entry.size > max_bytes:
        return (f"`{entry.path.name}` is {entry.size / 2**20:.1f} MiB, over the limit of "
                f"{max_bytes / 2**20:.0f} MiB per notebook: clear its outputs and hand it in again")
    return ""


def _dotted_reason(learner: Learner, assignment: str) -> str:
    if assignment == "-":
        dotted = ", ".join(f"`{e.path.name}`" for e in learner.dotted)
        return "no notebook was found in this folder" + (f" (not graded: {dotted}, named with a leading dot)"
                                                         if dotted else "")
    names = [e.path.name for e in learner.dotted
             if e.path.name.lstrip(".").removesuffix(SUFFIX) == assignment]
    if not names:
        return "no notebook handed in for this assignment"
    return (f"only `{names[0]}` was found, and files whose name starts with a dot are not graded: rename it "
            f"to `{assignment}{SUFFIX}`")


def select(learner: Learner, assignments: dict[str, Assignment], max_bytes: int) -> Selection:
    """The notebooks of one learner that are graded (one per assignment), and a row for everything else:
    refused files and notebooks that match no assignment."""
    selection = Selection()
    if learner.problem:
        return selection
    by_assignment: dict[str, list[Entry]] = {}
    refused: dict[str, str] = {}
    for entry in learner.notebooks:
        reason = _refusal(entry, max_bytes)
        target = entry.path.stem if reason else _assignment_of(entry, assignments, max_bytes)
        if isinstance(target, Assignment):
            by_assignment.setdefault(target.name, []).append(entry)
        elif reason and target in assignments:
            refused.setdefault(target, reason)
        else:
            selection.refusals.append(Refusal(learner.name, entry.path.stem, "error", reason or target))
    for name, entries in sorted(by_assignment.items()):
        newest = max(entries, key=lambda e: (e.mtime_ns, e.path.name))
        notes = []
        if len(entries) > 1:
            others = ", ".join(f"`{e.path.name}`" for e in entries if e is not newest)
            notes.append(f"You handed in {len(entries)} notebooks for {name}; only the newest, "
                         f"`{newest.path.name}`, was graded (not {others}).")
        if name in refused:
            notes.append(f"Not graded: {refused.pop(name)}.")
        notes += [f"Not searched: {skipped}." for skipped in learner.skipped]
        selection.submissions.append(Submission(learner.name, newest.path, name, tuple(notes)))
    selection.refusals += [Refusal(learner.name, name, "error", reason)
                           for name, reason in sorted(refused.items())]
    return selection


def unanswered(learner: Learner, selection: Selection, graded: list[str]) -> list[Refusal]:
    """A row for each assignment in ``graded`` that the learner has nothing for (one row when the folder
    holds nothing at all), saying why."""
    if learner.problem:
        return [Refusal(learner.name, name, "error", learner.problem) for name in graded or ["-"]]
    handled = {s.assignment for s in selection.submissions} | {r.assignment for r in selection.refusals}
    missing = [name for name in graded if name not in handled]
    if not missing and not handled:
        missing = ["-"]
    unsearched = "".join(f"; not searched: {skipped}" for skipped in learner.skipped)
    return [Refusal(learner.name, name, "missing", _dotted_reason(learner, name) + unsearched)
            for name in missing]
