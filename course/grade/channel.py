"""A running worker and its pipes: messages out and in under deadlines and size caps, nothing unbounded.

The grader's memory stays bounded whatever a worker does: a reply is read up to its cap and no further
(:class:`~.wire.LineReader`), stderr is drained by a thread that keeps only its last few KiB, and writes to
the worker wait at most until the deadline (:class:`~.deadlines.Deadline`). Past a deadline, or when a
message breaks the schema, the whole worker (its sandbox, or its process group) is killed.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable

from . import wire
from .deadlines import Deadline, MachineBusy, WorkerTimeout
from .sandbox import Launch

STDERR_TAIL_BYTES = 8 * 2**10
WRITE_CHUNK = 1 << 16


__all__ = ["Channel", "MachineBusy", "WorkerDied", "WorkerTimeout"]


class WorkerDied(Exception):
    """The worker ended, or sent something outside the protocol, and was killed; the message says how."""


class _StderrTail(threading.Thread):
    """Reads a worker's stderr to its end, keeping only the last bytes."""

    def __init__(self, fd: int):
        super().__init__(daemon=True)
        self.fd, self.tail = fd, bytearray()

    def run(self) -> None:
        while chunk := os.read(self.fd, 1 << 16):
            self.tail = (self.tail + chunk)[-STDERR_TAIL_BYTES:]
        os.close(self.fd)

    def last_line(self) -> str:
        lines = bytes(self.tail).decode(errors="replace").strip().splitlines()
        return lines[-1][:300] if lines else ""


class Channel:
    """One started worker process."""

    def __init__(self, launch: Launch):
        self.cleanup, self.lease = launch.cleanup, launch.lease
        user = {} if launch.user is None else {"user": launch.user, "group": launch.user, "extra_groups": []}
        try:
            self.process = subprocess.Popen(
                launch.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=launch.cwd, env=launch.env, pass_fds=launch.pass_fds, start_new_session=True, **user)
        except OSError:
            self._release()
            raise
        finally:
            for fd in launch.pass_fds:
                os.close(fd)
        self._stdin = self.process.stdin.fileno()
        os.set_blocking(self._stdin, False)
        self._reader = wire.LineReader(self.process.stdout.fileno())
        self._stderr = _StderrTail(os.dup(self.process.stderr.fileno()))
        self.process.stderr.close()
        self._stderr.start()

    def _overrun(self, deadline: Deadline) -> Exception:
        """Kill the worker whose deadline passed; what to raise (measured before the kill)."""
        error = deadline.overrun()
        self.close()
        return error

    def send(self, message: dict, deadline: Deadline) -> None:
        """Write one message, waiting for the pipe at most until ``deadline``."""
        data = memoryview(wire.dumps(message))
        while data:
            remaining = deadline.wait_s()
            writable = select.select([], [self._stdin], [], remaining)[1]
            if remaining <= 0 and not (writable and deadline.late_look()):
                raise self._overrun(deadline)
            if not writable:
                continue
            try:
                data = data[os.write(self._stdin, data[:WRITE_CHUNK]):]
            except BlockingIOError:
                continue
            except OSError:
                raise WorkerDied(self._death()) from None

    def receive(self, deadline: Deadline, cap: int, check: Callable[[dict], dict]) -> dict:
        """The next message, at most ``cap`` bytes and accepted by ``check``, before ``deadline`` (a reply
        already in the pipe when the grader looks, late, still counts)."""
        try:
            while (line := self._reader.line(cap)) is None:
                remaining = deadline.wait_s()
                readable = select.select([self._reader.fd], [], [], remaining)[0]
                if remaining <= 0 and not (readable and deadline.late_look()):
                    raise self._overrun(deadline)
                if readable and not self._reader.fill(cap):
                    raise WorkerDied(self._death())
            message = wire.loads(line)
        except wire.WireError as error:
            self.close()
            raise WorkerDied(f"it sent a malformed message: {error}") from None
        try:
            return check(message)
        except wire.WireError as error:
            self.close()
            raise WorkerDied(f"it sent a malformed message: {error}") from None
        except Exception as error:  # noqa: BLE001 (a message the schema did not foresee costs only this worker)
            self.close()
            raise WorkerDied(f"it sent a message the grader cannot read ({type(error).__name__})") from None

    def close(self) -> None:
        """Kill the worker with everything it started (if still running), remove its folders and give its user
        id back."""
        if self.process.returncode is None:  # never signal a reaped process's group: its id may be reused
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self._release()

    def _release(self) -> None:
        for folder in self.cleanup:
            shutil.rmtree(folder, ignore_errors=True)
        if self.lease is not None:
            self.lease.release()

    def _death(self) -> str:
        """How the worker ended, in words: its exit status and the last line it wrote to stderr."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.close()
            return "it stopped answering"
        self._stderr.join(timeout=1)
        how = _how(code)
        last = self._stderr.last_line()
        self.close()
        return how + (f"; last words: {last}" if last else "")


def _how(code: int) -> str:
    """An exit status in words; bwrap reports a signal as 128 plus its number."""
    number = -code if code < 0 else code - 128 if code > 128 else 0
    try:
        return f"killed by {signal.Signals(number).name}" if number else f"exit status {code}"
    except ValueError:
        return f"exit status {code}"
