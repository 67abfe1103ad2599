"""How a worker process is confined: bubblewrap where it works, plain process limits where it does not.

With bubblewrap (``bwrap``, the sandbox under Flatpak), every worker gets new PID, mount, IPC, UTS and network
namespaces, dies with the grader, and sees only: /usr and the system libraries, the Python installation and
virtual environment, a read-only staged copy of the course code it needs (``gpusim/``, ``course/`` without
its kernel ladders, and ``utils.py``; no ``.git``, no ``solutions/``, no ``tests/``, no checkout), its own
notebook's copy, and private, size-limited /tmp, /var/tmp, /dev/shm and home folders. It runs as an
unprivileged user: as root, bwrap sets up the mounts and ``setpriv`` then drops to a user id of its own (no
capabilities, ``no_new_privs``); otherwise a user namespace maps the instructor's account. Killing the
sandbox's first process ends its PID namespace and every process in it.

Without bubblewrap (macOS, containers without user namespaces, or ``--sandbox off``), a worker is an ordinary
process in its own session with the same resource limits, run as a user id of its own when the grader is root
and that user can reach Python; :data:`UNCONFINED` says what that leaves open.

Either way, a worker starts inside its submission's cgroup where the run has them (:mod:`.cgroups`), and as
root its user id is leased so that no other worker on the machine holds it at the same time (:mod:`.uids`).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from .cgroups import Cgroups, Domain, Stopped
from .staging import strip_grader_only
from .uids import Lease, Uids

COURSE_ROOT = Path(__file__).resolve().parents[2]
STAGED = ("gpusim", "course", "utils.py")  # what a worker imports; nothing else of the course is staged
NOT_STAGED = (Path("course", "kernels"),)  # the lessons' kernel ladders: no check imports them
INSIDE_COURSE, INSIDE_HOME = "/course", "/home/learner"
TMPFS_BYTES = {"/tmp": 128 * 2**20, "/var/tmp": 16 * 2**20, "/dev/shm": 64 * 2**20, INSIDE_HOME: 64 * 2**20}
SYSTEM_FOLDERS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_CONFIGURATION = ("/etc/ld.so.cache", "/etc/fonts")  # the loader's cache, fontconfig (matplotlib)
PROBE_TIMEOUT_S = 60

CONFINED = ("each worker in its own PID, mount, IPC and network namespaces (no network, no unix sockets of "
            "the host, every process it starts dies with it)",
            "it sees only the Python installation, the course code it needs and its own notebook: no other "
            "learner's files, no solutions/, no .git, no output folder",
            "private /tmp, /var/tmp and /dev/shm, removed with it",
            "an unprivileged user; memory, file size, process and CPU limits")
UNCONFINED = ("learner code can read every file its user can read, the course's solutions/ and .git included "
              "when they are readable, and write wherever that user may",
              "processes it starts in a new session can outlive the worker (until its submission ends, "
              "where it has a cgroup) and signal other processes of its user",
              "it shares the network, /tmp and /dev/shm with the machine")


Notebook = tuple[str, bytes] | None  # a notebook's file name and bytes, copied into the worker's folder


class SandboxError(Exception):
    """bubblewrap was required (``--sandbox bwrap``) but cannot run here."""


@dataclass(frozen=True)
class Isolation:
    """Whether workers run in bubblewrap, and what that does and does not guarantee, in words."""

    sandboxed: bool
    why_not: str = ""
    own_user: bool = True  # without bubblewrap: whether each worker runs as a user id of its own

    def statement(self) -> list[str]:
        if self.sandboxed:
            return ["Sandbox: bubblewrap: " + "; ".join(CONFINED) + "."]
        if self.own_user:
            user = "a user id of its own"
        elif os.geteuid() == 0:
            user = ("root, because the Python installation is not readable by other users (learner code can "
                    "do anything root can)")
        else:
            user = "your own user"
        return [f"WARNING: no sandbox ({self.why_not}). Each worker keeps memory, file size, process and CPU "
                f"limits and runs as {user}, but is NOT isolated: " + "; ".join(UNCONFINED) + ". Grade "
                "untrusted submissions only where bubblewrap works (Linux with user namespaces, or as root)."]


@dataclass(frozen=True)
class Launch:
    """What the grader starts for one worker: the command, its environment and the fds it inherits."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    pass_fds: tuple[int, ...]
    user: int | None  # fallback only: the user id to run as (root grader without setpriv)
    cleanup: tuple[Path, ...]  # host folders to remove when the worker is gone
    lease: Lease | None = None  # its user id, given back when the worker is gone


def python_folders() -> list[Path]:
    """The Python installation and virtual environment, as the interpreter names them and resolved."""
    folders = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix)]
    folders += [folder.resolve() for folder in folders]
    kept: list[Path] = []
    for folder in sorted(set(folders), key=lambda f: len(f.parts)):
        if not any(folder == k or k in folder.parents for k in kept):
            kept.append(folder)
    return [folder for folder in kept if not str(folder).startswith("/usr")]


def _open_to_others(folders: list[Path]) -> bool:
    """Whether another user can enter each folder and every folder above it (pyenv under /root cannot)."""
    return all(parent.stat().st_mode & stat.S_IXOTH
               for folder in folders for parent in (folder, *folder.parents))


def _private(paths: list[Path]) -> list[str]:
    """The folders among ``paths`` that a worker would see because Python lives around them."""
    exposed = []
    for path in paths:
        resolved = path.resolve()
        if any(resolved == folder or folder in resolved.parents for folder in python_folders()):
            exposed.append(str(path))
    return exposed


def _not_staged(folder: str, names: list[str]) -> set[str]:
    """The entries of ``folder`` that a staged copy leaves out: caches, hidden files, :data:`NOT_STAGED`."""
    left_out = set(shutil.ignore_patterns("__pycache__", "*.pyc", ".*")(folder, names))
    return left_out | {name for name in names if Path(folder, name).relative_to(COURSE_ROOT) in NOT_STAGED}


class Stage:
    """A read-only copy of the course code a worker needs, made once per run; for the learner worker
    (``learner``), without the bodies of the functions only the grader may run (:mod:`.staging`)."""

    def __init__(self, learner: bool = False) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="gpusim-grade-stage-"))
        self.course = self.root / "course"
        for name in STAGED:
            if (COURSE_ROOT / name).is_dir():
                shutil.copytree(COURSE_ROOT / name, self.course / name, ignore=_not_staged)
            else:
                shutil.copy2(COURSE_ROOT / name, self.course / name)
        if learner:
            strip_grader_only(self.course)
        for path in [self.root, *self.root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _environment(extra: dict[str, str]) -> dict[str, str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg",
           "PYTHONNOUSERSITE": "1", "USER": "learner", "LOGNAME": "learner"}
    return env | extra


def _ancestors(paths: list[str]) -> list[str]:
    """Every folder above ``paths``, parents first, that bwrap must create open (it makes them 0700)."""
    folders: list[str] = []
    for path in paths:
        for parent in reversed(Path(path).parents):
            if str(parent) != "/" and str(parent) not in folders:
                folders.append(str(parent))
    return folders


def _as_user(uid: int) -> list[str]:
    """setpriv's command line that runs the rest as ``uid``, without groups or capabilities."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]


def _bwrap(stage: Stage, inner: list[str], notebook_fd: int | None, notebook_name: str,
           uid: int | None) -> list[str]:
    binds = [str(folder) for folder in python_folders()]
    configuration = [path for path in SYSTEM_CONFIGURATION if os.path.exists(path)]
    command = ["bwrap", "--die-with-parent", "--new-session"]
    if os.geteuid() == 0:
        command += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                    "--unshare-cgroup-try", "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add",
                    "CAP_SETGID"]
    else:
        command += ["--unshare-all"]
    command += ["--ro-bind", "/usr", "/usr"]
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            command += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            command += ["--ro-bind", folder, folder]
    command += ["--proc", "/proc", "--dev", "/dev"]
    for folder in _ancestors([*binds, *configuration, INSIDE_COURSE, INSIDE_HOME + "/x", "/var/tmp"]):
        command += ["--perms", "0755", "--dir", folder]
    for folder, size in TMPFS_BYTES.items():
        command += ["--perms", "1777", "--size", str(size), "--tmpfs", folder]
    for folder in _ancestors(binds):  # a venv under /tmp (a CI clone): remake its folders above the new tmpfs
        if any(Path(folder).is_relative_to(private) and folder != private for private in TMPFS_BYTES):
            command += ["--perms", "0755", "--dir", folder]
    for path in configuration:
        command += ["--ro-bind", path, path]
    command += ["--ro-bind", str(stage.course), INSIDE_COURSE]
    for folder in binds:
        command += ["--ro-bind", folder, folder]
    if notebook_fd is not None:
        command += ["--perms", "0444", "--ro-bind-data", str(notebook_fd), f"{INSIDE_HOME}/{notebook_name}"]
    # The folders bwrap made on the way to the binds (/work above a venv, say) belong to the sandbox's user
    # in a user namespace: read-only, so that only the private temporary folders can be written.
    command += ["--remount-ro", "/", "--chdir", INSIDE_HOME]
    if uid is not None:
        command += _as_user(uid)
    return command + ["--", *inner]


class Sandbox:
    """Starts workers, confined as well as this machine allows (see :class:`Isolation`)."""

    def __init__(self, mode: str = "auto", private: list[Path] = (), cgroups: Cgroups | None = None):
        """``mode``: "auto" (bubblewrap if it works), "bwrap" (required) or "off". ``private``: folders
        (sources, submissions, output) that must stay out of a worker's sight. ``cgroups``: the run's, which
        this sandbox then closes."""
        self.cgroups = cgroups
        self.stopped = False
        self.uids = Uids() if os.geteuid() == 0 else None
        self.stage, self.learner_stage = Stage(), Stage(learner=True)
        why_not = "turned off with --sandbox off" if mode == "off" else self._bwrap_problem(list(private))
        if why_not and mode == "bwrap":
            self.close()
            raise SandboxError(f"--sandbox bwrap, but bubblewrap cannot be used here: {why_not}")
        self.isolation = Isolation(not why_not, why_not,
                                   own_user=os.geteuid() == 0 and _open_to_others(python_folders()))

    def _bwrap_problem(self, private: list[Path]) -> str:
        """Why bubblewrap cannot confine workers here ("" when a trial run works)."""
        if sys.platform != "linux":
            return f"bubblewrap needs Linux, and this is {sys.platform}"
        if shutil.which("bwrap") is None:
            return "bwrap is not installed (Debian and Ubuntu: apt-get install bubblewrap)"
        exposed = _private(private + [COURSE_ROOT])
        if exposed:
            return f"{', '.join(exposed)} lies inside the Python installation, which workers must see"
        try:
            launch = self._confined([sys.executable, "-I", "-c", "import numpy"], _environment({}), None)
        except OSError as error:
            return f"no user id for a worker ({error})"
        try:
            run = subprocess.run(launch.argv, env=launch.env, cwd=launch.cwd, capture_output=True,
                                 timeout=PROBE_TIMEOUT_S, start_new_session=True)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bwrap failed to start ({error})"
        finally:
            if launch.lease is not None:
                launch.lease.release()
        if run.returncode != 0:
            return f"bwrap failed ({run.stderr.decode(errors='replace').strip()[-300:]})"
        return ""

    def statement(self) -> list[str]:
        """What confines workers, and what each submission may use, in words."""
        return self.isolation.statement() + (self.cgroups.statement() if self.cgroups else [])

    def domain(self) -> Domain | None:
        """A new submission's cgroup, or None where the run has none (:class:`~.cgroups.Stopped` once the
        run is stopped; OSError when it cannot be made)."""
        if self.stopped:
            raise Stopped()
        return self.cgroups.domain() if self.cgroups else None

    def release(self, domain: Domain | None) -> None:
        """Kill what is left of a submission and remove its cgroup."""
        if domain is not None:
            self.cgroups.release(domain)

    def stop(self) -> None:
        """The run was interrupted: start no more workers, and kill every submission's processes."""
        self.stopped = True
        if self.cgroups:
            self.cgroups.stop()

    def launch(self, inner: list[str], env: dict[str, str], notebook: Notebook,
               domain: Domain | None = None) -> Launch:
        """How to start ``inner`` (a Python command line) confined, with ``env`` added to a minimal
        environment and a read-only copy of ``notebook`` (name, bytes) in its working folder, inside the
        cgroup ``domain`` when given. A worker given a notebook runs learner code: it sees the learner's
        stage of the course."""
        if self.stopped:
            raise Stopped()
        if self.isolation.sandboxed:
            launch = self._confined(inner, _environment(env), notebook)
        else:
            launch = self._unconfined(inner, _environment(env), notebook)
        return replace(launch, argv=domain.wrap(launch.argv)) if domain is not None else launch

    def _lease(self) -> Lease | None:
        return self.uids.lease() if self.uids is not None else None

    def _confined(self, inner: list[str], env: dict[str, str], notebook: Notebook) -> Launch:
        lease = self._lease()
        fd = None
        if notebook is not None:
            fd = os.memfd_create("notebook", os.MFD_CLOEXEC)
            os.write(fd, notebook[1])
            os.lseek(fd, 0, os.SEEK_SET)
        env |= {"HOME": INSIDE_HOME, "PYTHONPATH": INSIDE_COURSE, "TMPDIR": "/tmp",
                "MPLCONFIGDIR": INSIDE_HOME, "NUMBA_CACHE_DIR": INSIDE_HOME}
        argv = _bwrap(self._stage(notebook), inner, fd, notebook[0] if notebook else "", lease and lease.uid)
        return Launch(argv, env, "/", (fd,) if fd is not None else (), None, (), lease)

    def _unconfined(self, inner: list[str], env: dict[str, str], notebook: Notebook) -> Launch:
        lease = self._lease() if self.isolation.own_user else None
        home = Path(tempfile.mkdtemp(prefix="gpusim-grade-worker-"))
        if notebook is not None:
            (home / notebook[0]).write_bytes(notebook[1])
        if lease is not None:
            for path in [home, *home.iterdir()]:
                os.chown(path, lease.uid, lease.uid)
        env |= {"HOME": str(home), "PYTHONPATH": str(self._stage(notebook).course), "TMPDIR": str(home),
                "MPLCONFIGDIR": str(home), "NUMBA_CACHE_DIR": str(home)}
        if lease is not None and shutil.which("setpriv"):  # the user changes after entering the cgroup
            return Launch([*_as_user(lease.uid), "--", *inner], env, str(home), (), None, (home,), lease)
        return Launch(inner, env, str(home), (), lease and lease.uid, (home,), lease)

    def _stage(self, notebook: Notebook) -> Stage:
        return self.stage if notebook is None else self.learner_stage

    def close(self) -> None:
        """Remove the staged course and, with the run's cgroups, every process and cgroup left."""
        if self.cgroups:
            self.cgroups.close()
        self.stage.remove()
        self.learner_stage.remove()
