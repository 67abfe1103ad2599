"""What a worker does to itself before any untrusted code runs: resource limits, and the grader's pipes moved
off the standard file descriptors (so that the learner's prints and ``input()`` miss them).

Used by both workers (:mod:`.worker`, :mod:`.runner`); the numbers come from the grader's ``start`` message.
"""

from __future__ import annotations

import os
import resource
import sys
from dataclasses import dataclass

from . import wire

MAX_FILE_BYTES = 256 * 2**20
NEW_PROCESSES = 256  # processes and threads a worker may start
SUBMISSION_PROCESSES = 2 * NEW_PROCESSES  # in a submission's cgroup: both workers' processes and threads
MAX_CPU_S = 900  # a backstop for anything that escapes the grader's deadlines


@dataclass(frozen=True)
class Limits:
    """Deadlines and resource limits of one worker. Deadlines are seconds of the submission's CPU time where
    it has a cgroup (:mod:`.deadlines`), else of wall-clock time."""

    setup_s: float  # starting the worker and running the learner's cells
    call_s: float  # one request (a check call in W1, one Task's cases in W2)
    memory_bytes: int  # per process (its address space); a submission's cgroup holds all of them to it too

    def resources(self) -> dict:
        return {"memory_bytes": self.memory_bytes}


def _tasks_of_this_user() -> int:
    """Processes and threads of this user that this process can see (its sandbox, or the machine)."""
    uid, count = os.getuid(), 0
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            if pid.isdigit() and os.stat(f"/proc/{pid}").st_uid == uid:
                count += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return count


def apply(resources: dict) -> None:
    """Limit this process and its children: memory, file size, CPU time and new processes."""
    memory = int(resources["memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (MAX_CPU_S, MAX_CPU_S))
    if sys.platform == "linux":
        processes = _tasks_of_this_user() + NEW_PROCESSES
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))


def take_pipes():
    """The grader's two pipes, moved off fds 0 and 1, which then point to /dev/null."""
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    sys.stdin, sys.stdout = open(os.devnull), open(os.devnull, "w")
    return requests, replies


def send(replies, message: dict) -> None:
    replies.write(wire.dumps(message))
    replies.flush()


def describe(error: BaseException, limit: int) -> str:
    """An exception in words, cut to ``limit`` characters."""
    return f"{type(error).__name__}: {error}"[:limit]
