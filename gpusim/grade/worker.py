"""The untrusted process: runs one submission's cells, then the checks' untrusted half on request.

    python -m gpusim.grade.worker     (started by :mod:`gpusim.grade.sandbox`, never by hand)

Before any learner code runs it confines itself (:func:`confine`): a memory limit, no network where the OS
allows it, and, when started as root, the grader's folders hidden and the unprivileged user ``nobody``.
Its stdin and stdout carry the grader's messages (one JSON object per line, see :mod:`gpusim.grade.wire`);
the learner's prints go nowhere. For each request ``{"function", "names", "keywords"}`` it calls the check
function with the checking hooks replaced (:mod:`gpusim.grade.recording`), so each Task's cases are run
with :func:`gpusim.tasks.common.run` and returned as plain data; nothing is judged here.
"""

from __future__ import annotations

import ctypes
import importlib
import linecache
import os
import pwd
import resource
import stat
import sys
import tempfile
from pathlib import Path

from . import wire

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE, MNT_DETACH = 2, 4, 4096, 16384, 1 << 18, 2
UNPRIVILEGED_USER = "nobody"
MAX_FILE_BYTES = 256 * 2**20
MAX_PROCESSES = 4096
MAX_CPU_S = 900  # a backstop for anything that escapes the grader's kill
TMP = Path("/tmp")
MAX_MESSAGE_CHARS = 2000

_libc = ctypes.CDLL(None, use_errno=True)


def _call(function: str, *args) -> None:
    if getattr(_libc, function)(*args) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{function}: {os.strerror(error)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def encode(text: str | None) -> bytes | None:
        return text.encode() if text is not None else None

    _call("mount", encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data))


def _closed_ancestor(path: Path) -> Path | None:
    """The first folder on the way to ``path`` that other users may not enter (e.g. /root), if any."""
    for folder in reversed((path, *path.parents)):
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder
    return None


def _keep_python_reachable(prefix: Path) -> None:
    """When Python is installed under a closed folder (pyenv in /root), replace that folder, in this mount
    namespace only, by an empty open one that holds just the Python install, so the unprivileged user can
    import the standard library and nothing else of the folder."""
    closed = _closed_ancestor(prefix)
    if closed is None:
        return
    stage = tempfile.mkdtemp(prefix="gpusim-python-")
    _mount(str(prefix), stage, None, MS_BIND | MS_REC)
    _mount("tmpfs", str(closed), "tmpfs", MS_NOSUID | MS_NODEV, "mode=755")
    prefix.mkdir(parents=True)
    _mount(stage, str(prefix), None, MS_BIND | MS_REC)
    _call("umount2", stage.encode(), MNT_DETACH)
    os.rmdir(stage)


def _hide(folders: list[str]) -> None:
    """Cover each folder with an empty, closed tmpfs, in this mount namespace only."""
    for folder in folders:
        if os.path.isdir(folder):
            _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "mode=000,size=4k")


def _private_tmp(user: pwd.struct_passwd) -> None:
    """A fresh /tmp for this worker alone (so workers cannot meet there), with its working folder in it."""
    needed = (Path(__file__).resolve(), Path(sys.prefix).resolve())
    if any(TMP in path.parents for path in needed):
        return
    workdir = Path.cwd()
    _mount("tmpfs", str(TMP), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    workdir.mkdir(parents=True, exist_ok=True)
    os.chown(workdir, user.pw_uid, user.pw_gid)
    os.chdir(workdir)


def confine(memory_bytes: int, hidden: list[str]) -> list[str]:
    """Limit this process before learner code runs; returns the limits that took effect, in words.

    As root: a private network and mount namespace, ``hidden`` folders covered, a /tmp of its own, then the
    user ``nobody`` (which also makes the process undumpable, so other workers cannot trace it).
    Otherwise: a private network where unprivileged user namespaces are allowed, and the memory limit.
    """
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (MAX_CPU_S, MAX_CPU_S))
    applied = [f"memory limit {memory_bytes // 2**20} MiB"]
    if os.geteuid() != 0:
        try:
            _call("unshare", CLONE_NEWUSER | CLONE_NEWNET)
            applied.append("no network")
        except OSError:
            pass
        return applied
    _call("unshare", CLONE_NEWNS | CLONE_NEWNET)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _hide(hidden)
    _keep_python_reachable(Path(sys.base_prefix).resolve())
    user = pwd.getpwnam(UNPRIVILEGED_USER)
    _private_tmp(user)
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_PROCESSES, MAX_PROCESSES))
    os.setgroups([])
    os.setgid(user.pw_gid)
    os.setuid(user.pw_uid)
    return applied + ["no network", "sources, submissions and results hidden", "a /tmp of its own",
                      f"user {UNPRIVILEGED_USER}"]


def _take_pipes():
    """The grader's two pipes, moved off fds 0-2 so that the learner's input() and prints miss them."""
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    sys.stdin, sys.stdout = open(os.devnull), open(os.devnull, "w")
    return requests, replies


def _send(replies, message: dict) -> None:
    replies.write(wire.dumps(message))
    replies.flush()


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:MAX_MESSAGE_CHARS]


def _run_cell(label: str, source: str, namespace: dict) -> str | None:
    """Run one cell like a notebook would; the error it raised, in words, or None."""
    if source.lstrip().startswith(("%", "!")):
        return None
    filename = f"<{label}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        exec(compile(source, filename, "exec"), namespace)
    except (Exception, SystemExit) as error:  # noqa: BLE001 (a failing cell is reported, like in Jupyter)
        return f"{label} raised {_describe(error)}"
    return None


def _plain(result: dict) -> dict:
    """A result of common.run (or common.run_function) as JSON-ready data."""
    return {
        "outputs": {name: wire.encode_array(array) for name, array in result["outputs"].items()},
        "report": {name: int(value) for name, value in result["report"].items()},
        "launches": result["launches"],
        "error": result["error"],
    }


def _extra_message(extra, case, function) -> str | None:
    """A check function's further test of a plain-Python task (part 07's memory check), in words."""
    try:
        return None if extra is None else extra(case, function)
    except (Exception, SystemExit) as error:  # noqa: BLE001
        return f"the further check raised {_describe(error)}"


class Checks:
    """The check functions and the run function as they were before any learner code ran."""

    def __init__(self, module_name: str):
        from gpusim.tasks import common

        self.module = importlib.import_module(module_name)
        self.functions = {name: getattr(self.module, name) for name in dir(self.module)
                          if name.startswith("check_")}
        self.run = common.run

    def answer(self, request: dict, namespace: dict) -> dict:
        """Run one check call's Tasks on the learner's objects; plain results, never a verdict."""
        from .recording import FUNCTION, KERNEL, hooks_replaced

        missing = [name for name in request["names"] if name not in namespace]
        if missing:
            return {"missing": missing}
        steps = []

        def on_kernel(task, learner):
            steps.append({"kind": KERNEL, "results": [_plain(self.run(task, learner, case))
                                                      for case in task.cases]})

        def on_function(task, function, call, extra):
            from gpusim.tasks.common import run_function

            results = []
            for case in task.cases:
                result = _plain(run_function(task, function, case, call))
                result["extra"] = _extra_message(extra, case, function)
                results.append(result)
            steps.append({"kind": FUNCTION, "results": results})

        keywords = {key: tuple(value) if isinstance(value, list) else value
                    for key, value in request["keywords"].items()}
        failure = None
        try:
            with hooks_replaced(self.module, on_kernel, on_function):
                self.functions[request["function"]](*(namespace[name] for name in request["names"]),
                                                    **keywords)
        except (Exception, SystemExit) as error:  # noqa: BLE001 (the grader reports it)
            failure = _describe(error)
        return {"steps": steps, "failure": failure}


def main() -> None:
    requests, replies = _take_pipes()
    start = wire.loads(requests.readline())
    _send(replies, {"confined": confine(int(start["memory_bytes"]), [str(f) for f in start["hidden"]])})
    checks = Checks(start["module"])
    namespace = {"__name__": "__main__"}
    errors = [error for label, source in start["cells"] if (error := _run_cell(label, source, namespace))]
    _send(replies, {"ready": True, "cell_errors": errors})
    for line in requests:
        try:
            reply = checks.answer(wire.loads(line), namespace)
            _send(replies, reply)
        except (Exception, SystemExit) as error:  # noqa: BLE001 (e.g. results that cannot be encoded)
            _send(replies, {"steps": [], "failure": f"the grader's worker failed: {_describe(error)}"})


if __name__ == "__main__":
    main()
