"""User ids for workers: as root, each worker runs as a user id of its own, which no other worker on the
machine holds while it lives, whichever grader started it.

The limit on processes (RLIMIT_NPROC) counts per user id, machine-wide, and processes of one user id may
signal each other: two workers must never share one. Each id is leased under a lock file in
:data:`LOCK_FOLDER`, flocked for the worker's life (the kernel drops the lock if the grader dies), and an
id that still has processes (left by a grader that died) is passed over. No account is needed.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import stat
import threading
from pathlib import Path

FIRST_UID = 1_900_000_000
UID_POOL = 1_000_000
LOCK_FOLDER = Path("/run" if os.path.isdir("/run") else "/var/run", "course-grade", "uids")


class NoUid(OSError):
    """No user id of the pool could be leased."""


def _in_use(uid: int) -> bool:
    """Whether a process (that this grader can see) runs with ``uid`` as its real, effective or saved id."""
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as status:
                ids = next(line for line in status if line.startswith("Uid:")).split()[1:]
        except (OSError, StopIteration):
            continue
        if str(uid) in ids:
            return True
    return False


def _lock_folder() -> Path:
    """:data:`LOCK_FOLDER`, made if needed: root's own, and no one else's to write."""
    LOCK_FOLDER.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(LOCK_FOLDER)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise NoUid(f"{LOCK_FOLDER} must be a folder of root's that no one else may write")
    return LOCK_FOLDER


class Lease:
    """One user id, held until :meth:`release`."""

    def __init__(self, uid: int, fd: int, path: Path):
        self.uid, self._fd, self._path = uid, fd, path

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self._path.unlink()  # still locked: a grader that opened this file finds it gone and tries again
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None


def _try(uid: int, folder: Path) -> Lease | None:
    path = folder / str(uid)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino == os.stat(path).st_ino and not _in_use(uid):
            return Lease(uid, fd, path)
    except OSError:
        pass
    os.close(fd)
    return None


class Uids:
    """Leases user ids from the pool, starting at a random place in it."""

    ATTEMPTS = 1000

    def __init__(self):
        self._next = secrets.randbelow(UID_POOL)
        self._lock = threading.Lock()

    def lease(self) -> Lease:
        folder = _lock_folder()
        for _ in range(self.ATTEMPTS):
            with self._lock:
                uid = FIRST_UID + self._next
                self._next = (self._next + 1) % UID_POOL
            if (lease := _try(uid, folder)) is not None:
                return lease
        raise NoUid(f"no free user id among {self.ATTEMPTS} tried in {folder}")
