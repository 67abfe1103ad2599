"""A fresh cgroup for a grader run by the tests, owned by the user who runs it: what systemd's
``Delegate=yes`` gives an ordinary user's scope (the folder, and the files that move processes and turn
controllers on, are the user's). A grader started in it makes its cgroups inside, so that a test sees
exactly what it left.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from course.grade.cgroups import Location, locate, remove_tree

OWNED = ("cgroup.procs", "tasks", "cgroup.threads", "cgroup.subtree_control")


class Delegation:
    """A cgroup per hierarchy under the tests' own, given to ``owner``; removed, with all it holds, by
    :meth:`close`."""

    def __init__(self, owner: int):
        location = locate()
        if not isinstance(location, Location):
            raise OSError(location)
        name = f"delegated-course-tests-{os.getpid()}-{secrets.token_hex(3)}"
        self.folders = [parent / name for parent in dict.fromkeys(location.parents.values())]
        for folder in self.folders:
            folder.mkdir()
            os.chown(folder, owner, owner)
            for file in OWNED:
                if (folder / file).exists():
                    os.chown(folder / file, owner, owner)

    def enter(self) -> list[str]:
        """A command-line prefix that moves itself into this cgroup, then runs the rest (as root, before any
        change of user)."""
        moves = " && ".join(f"echo $$ > {folder / 'cgroup.procs'}" for folder in self.folders)
        return ["sh", "-c", f'{moves} && exec "$@"', "sh"]

    def left(self) -> list[Path]:
        """The cgroups left inside, by whatever ran in it."""
        return sorted(path for folder in self.folders for path in folder.rglob("*") if path.is_dir())

    def close(self) -> None:
        for folder in self.folders:
            remove_tree(folder)
