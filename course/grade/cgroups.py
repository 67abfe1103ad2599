"""One resource domain per submission: a cgroup that holds every process of the submission's workers, with a
CPU quota, a memory limit covering all of them (swap included) and a process limit, and that measures the CPU
time they use, which the deadlines count (:mod:`.deadlines`).

The grader writes cgroupfs itself, under its own cgroup, in whichever hierarchy holds the cpu, memory and pids
controllers, found at run time: cgroup v2 (the unified hierarchy of current distributions) or v1 (one
hierarchy per controller). That takes root, or a cgroup delegated to the grader's user; an ordinary user's
grader restarts itself in a systemd user scope with ``Delegate=yes`` where systemd offers one
(:func:`delegation_command`). Where none of this works, :class:`Cgroups` says why, and workers keep only their
per-process limits (:mod:`.limits`).

A run makes ``<parent>/course-grade-<pid>-<random>/`` (one per v1 hierarchy) and ``s<n>/`` in it for each
submission, and removes them at the end, also when interrupted. It holds an flock on its run folder while it
lives, so that a later run can tell a dead grader's folders from a living one's and remove them.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PREFIX = "course-grade-"
V1_CONTROLLERS = ("cpu", "cpuacct", "memory", "pids")
V2_CONTROLLERS = ("cpu", "memory", "pids")
PERIOD_US = 100_000
KILL_ROUNDS, REMOVE_WAIT_S, STALE_WAIT_S = 200, 10.0, 3.0
DELEGATED = "COURSE_GRADE_DELEGATED"  # set in the environment of a grader restarted in a systemd scope
PROBE_TIMEOUT_S = 15
# A process in the submission's cgroup writes its own pid into each of the leaf's cgroup.procs files, then
# becomes the worker: nothing of the worker runs outside the cgroup.
ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


class Stopped(BaseException):
    """The run was interrupted: no worker starts any more (a BaseException, so no handler of workers' errors
    mistakes it for one)."""


@dataclass(frozen=True)
class Budget:
    """What one submission may use, all its processes together."""

    memory_bytes: int
    processes: int
    cpus: float = 1.0


@dataclass(frozen=True)
class Location:
    """Where a run's cgroups go: per controller, the folder that holds the run's folder."""

    version: int
    parents: dict[str, Path]
    take_over: Path | None = None  # v2: the grader's own cgroup, which it leaves for a leaf of the run


def _mounts() -> list[tuple[str, Path, str, set[str]]]:
    """(type, mount point, root, super options) of every cgroup mount."""
    found = []
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            left, right = line.split(" - ", 1)
            fields, (kind, _, options) = left.split(), right.split()[:3]
            if kind in ("cgroup", "cgroup2"):
                point = fields[4].encode().decode("unicode_escape")
                found.append((kind, Path(point), fields[3], set(options.split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" its v2 path."""
    paths = {}
    with open("/proc/self/cgroup") as cgroups:
        for line in cgroups:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def _folder(point: Path, root: str, path: str) -> Path | None:
    """The folder of cgroup ``path`` under a mount of ``root`` at ``point`` (None if it is not inside)."""
    relative = os.path.relpath(path, root)
    return None if relative.startswith("..") else (point / relative).resolve()


def _read(path: Path) -> str:
    return path.read_text().strip()


def _writable(*paths: Path) -> bool:
    return all(os.access(path, os.W_OK) for path in paths)


def _locate_v1() -> Location | str:
    mounts = {controller: (point, root) for kind, point, root, options in _mounts() if kind == "cgroup"
              for controller in options & set(V1_CONTROLLERS)}
    missing = [controller for controller in V1_CONTROLLERS if controller not in mounts]
    if missing:
        return f"no cgroup v1 hierarchy holds {', '.join(missing)}"
    own = _own_paths()
    parents = {}
    for controller in V1_CONTROLLERS:
        folder = _folder(*mounts[controller], own.get(controller, "/"))
        if folder is None or not folder.is_dir():
            return f"this process's {controller} cgroup is not under its mount"
        if not _writable(folder):
            return f"this user may not make cgroups in {folder}"
        parents[controller] = folder
    return Location(1, parents)


def _locate_v2() -> Location | str:
    mounts = [(point, root) for kind, point, root, _ in _mounts() if kind == "cgroup2"]
    own_path = _own_paths().get("")
    if not mounts or own_path is None:
        return "no cgroup v2 hierarchy is mounted"
    own = _folder(*mounts[0], own_path)
    if own is None:
        return "this process's cgroup v2 is not under its mount"
    needed = set(V2_CONTROLLERS)
    available = set(_read(own / "cgroup.controllers").split())
    if not needed <= available:
        return f"cgroup v2 offers only {', '.join(sorted(available)) or 'no controllers'} to {own}"

    def at(folder: Path, take_over: Path | None = None) -> Location:
        return Location(2, dict.fromkeys(V2_CONTROLLERS, folder), take_over)

    if needed <= set(_read(own / "cgroup.subtree_control").split()) and _writable(own):
        return at(own)
    procs = _read(own / "cgroup.procs").split()
    if procs == [str(os.getpid())] and _writable(own, own / "cgroup.procs", own / "cgroup.subtree_control"):
        return at(own, own)  # alone in it (a delegated systemd scope): it moves into a leaf of the run
    if own != mounts[0][0] and _writable(own.parent):
        return at(own.parent)  # root, beside its own cgroup
    return f"this user may not make cgroups in {own}, which holds other processes too"


def locate() -> Location | str:
    """Where this grader can make its cgroups, or why it cannot."""
    if sys.platform != "linux":
        return f"cgroups need Linux, and this is {sys.platform}"
    try:
        v2 = _locate_v2()
        if isinstance(v2, Location):
            return v2
        v1 = _locate_v1()
    except OSError as error:
        return f"cgroupfs cannot be read ({error})"
    return v1 if isinstance(v1, Location) else f"{v2}; {v1}"


def delegation_command(argv: list[str]) -> list[str] | None:
    """``argv`` restarted in a systemd user scope whose cgroup is delegated to this user, when this grader
    cannot make cgroups itself and systemd can give it some; otherwise None."""
    if os.geteuid() == 0 or os.environ.get(DELEGATED) or shutil.which("systemd-run") is None:
        return None
    if isinstance(locate(), Location):
        return None
    scope = ["systemd-run", "--user", "--scope", "--quiet", "-p", "Delegate=yes", "--"]
    try:
        probe = subprocess.run([*scope, "true"], capture_output=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return [*scope, *argv] if probe.returncode == 0 else None


@contextmanager
def _flocked(folder: Path):
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _pids(folders: list[Path]) -> set[int]:
    found = set()
    for folder in folders:
        try:
            found.update(int(pid) for pid in (folder / "cgroup.procs").read_text().split())
        except OSError:
            continue
    return found


def _kill_all(folders: list[Path]) -> None:
    """SIGKILL every process in ``folders`` (cgroup leaves) until none is left. Each process is pinned by a
    pidfd before the list is read again, so that a pid reused outside the cgroup is never signalled."""
    kill_file = folders[0] / "cgroup.kill"
    if kill_file.exists():
        try:
            kill_file.write_text("1")
            return
        except OSError:
            pass
    for _ in range(KILL_ROUNDS):
        listed = _pids(folders)
        if not listed:
            return
        pinned = {}
        for pid in listed:
            try:
                pinned[pid] = os.pidfd_open(pid)
            except OSError:
                continue
        still = _pids(folders)
        for pid, fd in pinned.items():
            try:
                if pid in still:
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
            except OSError:
                pass
            finally:
                os.close(fd)
        time.sleep(0.01)


def _remove(folder: Path, wait_s: float = REMOVE_WAIT_S) -> bool:
    """rmdir a cgroup, waiting for its killed processes to finish exiting; False if it stays."""
    end = time.monotonic() + wait_s
    while True:
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > end:
                return False
            time.sleep(0.02)


def remove_tree(folder: Path, kill: bool = True, wait_s: float = REMOVE_WAIT_S) -> None:
    """Remove ``folder`` and its sub-cgroups, deepest first, killing whatever runs in them (or, without
    ``kill``, leaving in place those that hold processes: a grader's own leaf)."""
    leaves = sorted((path for path in folder.rglob("*") if path.is_dir()), key=lambda p: -len(p.parts))
    for path in [*leaves, folder]:
        if kill:
            _kill_all([path])
        elif _pids([path]):
            continue
        _remove(path, wait_s)


def _remove_stale(parent: Path) -> None:
    """Remove the run folders of graders that died without removing them (their flock is free)."""
    for run in parent.glob(PREFIX + "*"):
        try:
            fd = os.open(run, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)  # a living grader's
            continue
        try:
            remove_tree(run, wait_s=STALE_WAIT_S)  # processes it cannot see (another PID namespace) stay
        finally:
            os.close(fd)


class Domain:
    """One submission's cgroup (a leaf in each hierarchy): what it may use, what it used, and its end."""

    def __init__(self, location: Location, runs: dict[str, Path], name: str, budget: Budget):
        self.version, self.cpus = location.version, budget.cpus
        self.leaf = {controller: runs[controller] / name for controller in runs}
        self.folders = list(dict.fromkeys(self.leaf.values()))
        try:
            for folder in self.folders:
                folder.mkdir()
            self._limit(budget)
        except OSError:
            for folder in self.folders:
                _remove(folder)
            raise
        self._cpu_s = 0.0

    def _limit(self, budget: Budget) -> None:
        if self.version == 2:
            leaf = self.folders[0]
            self._write(leaf / "memory.max", budget.memory_bytes)
            self._write(leaf / "memory.swap.max", 0, optional=True)
            self._write(leaf / "pids.max", budget.processes)
            self._write(leaf / "cpu.max", f"{round(budget.cpus * PERIOD_US)} {PERIOD_US}")
        else:
            memory = self.leaf["memory"]
            self._write(memory / "memory.limit_in_bytes", budget.memory_bytes)
            self._write(memory / "memory.memsw.limit_in_bytes", budget.memory_bytes, optional=True)
            self._write(self.leaf["pids"] / "pids.max", budget.processes)
            self._write(self.leaf["cpu"] / "cpu.cfs_period_us", PERIOD_US)
            self._write(self.leaf["cpu"] / "cpu.cfs_quota_us", round(budget.cpus * PERIOD_US))

    @staticmethod
    def _write(path: Path, value, optional: bool = False) -> None:
        if optional and not path.exists():
            return
        path.write_text(str(value))

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside this cgroup."""
        procs = [str(folder / "cgroup.procs") for folder in self.folders]
        return ["/bin/sh", "-c", ENTER, "sh", *procs, "--", *argv]

    def cpu_s(self) -> float:
        """CPU seconds that the processes of this cgroup used, those that ended included."""
        try:
            if self.version == 2:
                stat = dict(line.split() for line in (self.folders[0] / "cpu.stat").read_text().splitlines())
                self._cpu_s = int(stat["usage_usec"]) / 1e6
            else:
                self._cpu_s = int(_read(self.leaf["cpuacct"] / "cpuacct.usage")) / 1e9
        except (OSError, KeyError, ValueError):
            pass  # removed at the end of the run: the last figure read stands
        return self._cpu_s

    def runnable_s(self) -> dict[int, float]:
        """Seconds each living thread of this cgroup has been runnable: on a CPU, or waiting for one in the
        run queue (schedstat), but not sleeping or blocked."""
        listing = self.folders[0] / "cgroup.threads" if self.version == 2 else self.leaf["cpuacct"] / "tasks"
        runnable = {}
        try:
            threads = listing.read_text().split()
        except OSError:
            return runnable
        for tid in threads:
            try:
                on_cpu, waiting = Path(f"/proc/{tid}/schedstat").read_text().split()[:2]
                runnable[int(tid)] = (int(on_cpu) + int(waiting)) / 1e9
            except (OSError, ValueError):
                continue
        return runnable

    def kill(self) -> None:
        """Kill every process of the submission: workers, and whatever they started."""
        _kill_all(self.folders)

    def close(self) -> None:
        self.kill()
        for folder in self.folders:
            _remove(folder)


class Cgroups:
    """A run's cgroups: the run's folder, one :class:`Domain` per submission, and their removal."""

    def __init__(self, budget: Budget, jobs: int):
        self.budget = budget
        self.live: set[Domain] = set()
        self._lock = threading.Lock()
        self._names = itertools.count()
        self._held: list[int] = []
        self.stopped = False
        self.runs: dict[str, Path] = {}
        found = locate()
        self.location = found if isinstance(found, Location) else None
        self.why_not = found if isinstance(found, str) else ""
        if self.location is not None:
            try:
                self._create(jobs)
            except OSError as error:
                self._remove_runs()
                self.location, self.why_not = None, f"the run's cgroup could not be made ({error})"

    def _create(self, jobs: int) -> None:
        name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        for parent in dict.fromkeys(self.location.parents.values()):
            with _flocked(parent):
                _remove_stale(parent)
                run = parent / name
                run.mkdir()
                for controller, folder in self.location.parents.items():
                    if folder == parent:
                        self.runs[controller] = run
                fd = os.open(run, os.O_RDONLY | os.O_DIRECTORY)
                self._held.append(fd)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if self.location.version == 2:
            run = self.runs["cpu"]
            enable = " ".join(f"+{controller}" for controller in V2_CONTROLLERS)
            if self.location.take_over is not None:
                (run / "grader").mkdir()
                (run / "grader" / "cgroup.procs").write_text(str(os.getpid()))
                (self.location.take_over / "cgroup.subtree_control").write_text(enable)
            (run / "cgroup.subtree_control").write_text(enable)
            (run / "cpu.weight").write_text(str(min(10_000, 100 * jobs)))
        else:
            (self.runs["cpu"] / "cpu.shares").write_text(str(1024 * jobs))

    def statement(self) -> list[str]:
        if self.location is None:
            return [f"WARNING: no cgroup per submission ({self.why_not}). Submissions share the machine's "
                    f"CPU, and memory and process limits hold per process only: a submission that starts "
                    f"many processes or threads can slow the others, and deadlines are wall-clock time, so a "
                    f"busy machine can make an honest notebook time out."]
        mib, version = self.budget.memory_bytes // 2**20, self.location.version
        return [f"Resources: each submission in a cgroup of its own (cgroup v{version}): at most "
                f"{self.budget.cpus:g} CPU, {mib} MiB of memory for all its processes together (no swap) and "
                f"{self.budget.processes} processes; deadlines count its own CPU time."]

    def domain(self) -> Domain | None:
        """A new submission's cgroup (None where there are none); OSError if it cannot be made."""
        if self.location is None:
            return None
        with self._lock:
            if self.stopped:
                raise Stopped()
            domain = Domain(self.location, self.runs, f"s{next(self._names)}", self.budget)
            self.live.add(domain)
        return domain

    def release(self, domain: Domain) -> None:
        """Kill a submission's processes and remove its cgroup."""
        domain.close()
        with self._lock:
            self.live.discard(domain)

    def stop(self) -> None:
        """No new domains; every process of every submission killed."""
        with self._lock:
            self.stopped = True
            live = list(self.live)
        for domain in live:
            domain.kill()

    def close(self) -> None:
        """Kill everything left and remove every cgroup this run made."""
        self.stop()
        for domain in list(self.live):
            self.release(domain)
        self._remove_runs()

    def _remove_runs(self) -> None:
        if self.location is not None and self.location.take_over is not None and "cpu" in self.runs:
            self._leave_run(self.runs["cpu"], self.location.take_over)
        for run in dict.fromkeys(self.runs.values()):
            remove_tree(run, kill=False)
        for fd in self._held:
            os.close(fd)
        self._held, self.runs = [], {}

    @staticmethod
    def _leave_run(run: Path, own: Path) -> None:
        """v2, after taking over its own cgroup: turn the controllers off again and move back into it."""
        disable = " ".join(f"-{controller}" for controller in V2_CONTROLLERS)
        try:
            (run / "cgroup.subtree_control").write_text(disable)
            (own / "cgroup.subtree_control").write_text(disable)
            (own / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            pass  # the run's folder then stays until this grader ends; the next run removes it
