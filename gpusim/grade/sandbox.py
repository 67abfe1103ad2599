"""Starting a worker process for one submission and talking to it under a deadline.

The worker (:mod:`gpusim.grade.worker`) gets a fresh empty folder as its working directory, a minimal
environment (no variables of the grader's), its own process group (so a kill takes its children too) and
confines itself before running learner code. Every reply is awaited with a deadline; past it the whole group
is killed and :class:`WorkerTimeout` raised, so an endless loop costs one task, not the run.
"""

from __future__ import annotations

import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import gpusim

from . import wire
from .worker import UNPRIVILEGED_USER

MAX_REPLY_BYTES = 256 * 2**20
COURSE_ROOT = Path(gpusim.__file__).resolve().parent.parent


@dataclass(frozen=True)
class Limits:
    setup_s: float  # starting the worker and running the learner's cells
    call_s: float  # one check call (all its cases)
    memory_bytes: int


class WorkerTimeout(Exception):
    """The worker did not answer in time and was killed."""


class WorkerDied(Exception):
    """The worker ended (or broke the protocol) without answering; the message says how, if known."""


def _environment(workdir: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(workdir),
        "PYTHONPATH": str(COURSE_ROOT), "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1",
        "COURSE_MODE": "cpu", "NUMBA_ENABLE_CUDASIM": "1", "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(workdir), "NUMBA_CACHE_DIR": str(workdir),
    }


def _private_workdir() -> Path:
    """An empty folder the worker may write to (owned by the unprivileged user when the grader is root)."""
    workdir = Path(tempfile.mkdtemp(prefix="gpusim-grade-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam(UNPRIVILEGED_USER)
        os.chown(workdir, user.pw_uid, user.pw_gid)
    return workdir


class Worker:
    """One running worker: it has run the submission's cells when the constructor returns."""

    def __init__(self, module: str, cells: tuple[tuple[str, str], ...], limits: Limits,
                 hidden: tuple[Path, ...]):
        self.workdir = _private_workdir()
        self._stderr = tempfile.TemporaryFile()
        self._buffer = b""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gpusim.grade.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, cwd=self.workdir, env=_environment(self.workdir), start_new_session=True)
        try:
            deadline = time.monotonic() + limits.setup_s
            self._write({"module": module, "cells": [list(cell) for cell in cells],
                         "memory_bytes": limits.memory_bytes, "hidden": [str(path) for path in hidden]})
            self.confinement: list[str] = self._receive(deadline).get("confined", [])
            self.cell_errors: list[str] = [str(e) for e in self._receive(deadline).get("cell_errors", [])]
        except BaseException:
            self.close()
            raise

    def request(self, message: dict, seconds: float) -> dict:
        """Send one request and wait at most ``seconds`` for its reply."""
        self._write(message)
        return self._receive(time.monotonic() + seconds)

    def close(self) -> None:
        """Kill the worker's process group (if still running) and remove its folder."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout, self._stderr):
            pipe.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def _write(self, message: dict) -> None:
        try:
            self.process.stdin.write(wire.dumps(message))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerDied(self._death()) from None

    def _receive(self, deadline: float) -> dict:
        stdout = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise WorkerTimeout()
            if not select.select([stdout], [], [], remaining)[0]:
                continue
            chunk = os.read(stdout, 1 << 20)
            if not chunk:
                raise WorkerDied(self._death())
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise WorkerDied("it sent more data than any check returns")
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return wire.loads(line)
        except wire.WireError as error:
            raise WorkerDied(f"it sent something that is not a reply ({error})") from None

    def _death(self) -> str:
        """How the worker ended, in words: its exit status and the last line it wrote to stderr."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "it stopped answering"
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        return how + (f"; last words: {lines[-1][:300]}" if lines else "")
