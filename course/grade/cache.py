"""What the grader measures before grading, kept for its next run of the same course on the same machine.

Two things cost a run most of a minute before the first submission is graded, and depend on nothing a learner
hands in: the reference solution's counters on the hidden cases (the budgets, a function of the course code
and the source notebooks alone) and the reference solution's times (the deadlines, which count CPU time where
there are cgroups, and so depend on the code and the machine, not on how busy it is). Both are kept in one
JSON file per digest of what they depend on, under ``--cache`` (default ``~/.cache/gpu-course-grader``);
``--cache ''`` turns it off. Times measured by the wall clock (no cgroups) are never kept.

The file is the grader's own data and is read as data: a folder that another user may write to is not used,
and a file that does not parse into plain numbers is measured again, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import stat
import tempfile
from pathlib import Path

from .limits import Limits
from .sandbox import COURSE_ROOT

DEFAULT_FOLDER = Path.home() / ".cache" / "gpu-course-grader"
CODE = ("utils.py", "course", "gpusim")  # what the checks and the reference runs import
SKIPPED = ("__pycache__", ".pyc")


def tree_digest(root: Path, names, extra: bytes = b"") -> str:
    """sha256 (16 hex digits) of every file under ``root/name`` for ``names``: paths and contents, in a
    stable order, then ``extra``."""
    digest = hashlib.sha256()
    for name in names:
        path = root / name
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for file in files:
            if file.is_file() and not any(part in str(file) for part in SKIPPED):
                digest.update(str(file.relative_to(root)).encode() + b"\0" + file.read_bytes() + b"\0")
    digest.update(extra)
    return digest.hexdigest()[:16]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor()


def _own_folder(folder: Path) -> bool:
    """Whether ``folder`` exists or was made, belongs to this user, and no one else may write to it."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.stat(folder, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


class GraderCache:
    """The kept measurements of one course state: ``profiles`` (joined key -> counters) and ``limits``
    (assignment -> Limits, only for CPU-time deadlines)."""

    def __init__(self, folder: Path | None, sources: Path, names, memory_bytes: int, sandbox_mode: str):
        self.path = None
        self.profiles: dict[str, dict[str, int]] = {}
        self.limits: dict[str, Limits] = {}
        if folder is None or not _own_folder(folder):
            return
        notebooks = _notebooks(sources, names)
        machine = "|".join((platform.python_version(), platform.machine(), _cpu_model(), str(memory_bytes),
                            sandbox_mode))
        self.path = folder / f"{tree_digest(COURSE_ROOT, CODE, notebooks + machine.encode())}.json"
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text())
            profiles = {key: {name: value for name, value in counters.items()}
                        for key, counters in data["profiles"].items()}
            limits = {name: Limits(*values) for name, values in data["limits"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return
        if all(isinstance(key, str) and all(isinstance(n, str) and type(v) is int for n, v in c.items())
               for key, c in profiles.items()) and all(_plain(limit) for limit in limits.values()):
            self.profiles, self.limits = profiles, limits

    def save(self, profiles: dict[str, dict[str, int]], limits: dict[str, Limits]) -> None:
        """Keep these measurements (written to a temporary file, then renamed: a reader never sees half)."""
        if self.path is None:
            return
        self.profiles, self.limits = profiles, limits
        data = {"profiles": profiles, "limits": {name: [limit.setup_s, limit.call_s, limit.memory_bytes]
                                                 for name, limit in limits.items()}}
        try:
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".part")
            with os.fdopen(handle, "w") as file:
                json.dump(data, file)
            os.replace(temporary, self.path)
        except OSError:
            pass


def _notebooks(sources: Path, names) -> bytes:
    return b"".join(name.encode() + b"\0" + _read(sources / f"{name}.ipynb") for name in sorted(names))


def course_digest(sources: Path, names) -> str:
    """What the grading of these assignments depends on: the course code and their source notebooks."""
    return tree_digest(COURSE_ROOT, CODE, _notebooks(sources, names))


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _plain(limit: Limits) -> bool:
    numbers = (limit.setup_s, limit.call_s)
    return (all(type(x) in (int, float) and math.isfinite(x) and x > 0 for x in numbers)
            and type(limit.memory_bytes) is int and limit.memory_bytes > 0)
