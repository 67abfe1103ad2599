"""One long-lived helper process that answers JSON requests, a line each way.

The compile gates (:mod:`course.compilegate` for Numba, :mod:`course.tasks.tritongate` for Triton) compile in
a process of their own, where the simulator or interpreter is off. Starting one costs a second or more (it
imports the compiler), so each gate keeps one helper per Python process: started on first use (or early, in
the background, with :meth:`LineHelper.start_early`), restarted if it dies, stopped at exit, with a deadline
per request.

    helper = LineHelper("course.compilegate", drop_env=("NUMBA_ENABLE_CUDASIM",), valid=lambda r: ...)
    helper.request({...}, timeout=60)   # the answer, or raises HelperDied or queue.Empty (past the deadline)
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class HelperDied(Exception):
    """The helper process exited, or answered something that is not an answer."""


class LineHelper:
    """``python -m MODULE``: one JSON request per line on its stdin, one JSON answer a line on its stdout."""

    def __init__(self, module: str, drop_env: tuple[str, ...] = (), set_env: dict | None = None,
                 valid: Callable[[object], bool] = lambda answer: isinstance(answer, dict)):
        self.module, self.drop_env, self.set_env, self.valid = module, drop_env, set_env or {}, valid
        self.process = None
        self.owner = None
        self.replies = None
        self.stderr = None
        self.lock = threading.Lock()  # callers hold it around a request (and its retry)
        self.started = 0  # how many helper processes this process has started
        atexit.register(self.stop)

    def running(self) -> bool:
        """Is there a live helper process, started by this process?"""
        return self.process is not None and self.process.poll() is None and self.owner == os.getpid()

    def start_early(self) -> None:
        """Start the helper now, unless one is running (its import then overlaps with other work)."""
        with self.lock:
            if not self.running():
                self.start()

    def request(self, message: dict, timeout: float) -> dict:
        """Send one request and wait at most `timeout` seconds for its answer (call with the lock held)."""
        if not self.running():
            self.start()
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except OSError:
            raise HelperDied(self._stopped()) from None
        reply = self.replies.get(timeout=timeout)
        if reply is None:
            raise HelperDied(self._stopped())
        try:
            answer = json.loads(reply)
        except ValueError:
            answer = None
        if not self.valid(answer):
            raise HelperDied(f"it answered {reply[:200]!r}")
        return answer

    def start(self) -> None:
        self.stop()
        env = {key: value for key, value in os.environ.items() if key not in self.drop_env}
        env.update(self.set_env)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen([sys.executable, "-m", self.module], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.owner = os.getpid()
        self.started += 1
        self.replies = queue.Queue()
        threading.Thread(target=_read_lines, args=(self.process.stdout, self.replies), daemon=True).start()

    def _stopped(self) -> str:
        """Why the helper is gone: its exit status and the end of what it wrote to stderr."""
        process = self.process
        self.stop()
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - 1500))
        tail = self.stderr.read().decode(errors="replace").strip()
        return f"it exited with status {process.returncode}" + (f":\n{tail}" if tail else "")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and self.owner == os.getpid():
            process.kill()
            process.wait()
            process.stdin.close()  # its stdout is closed by the thread that reads it, at the end


def _read_lines(stream, replies):
    with stream:
        for line in stream:
            replies.put(line)
    replies.put(None)


def serve(answer: Callable[[dict], dict]) -> None:
    """The helper's loop: each line of stdin is a request, each answer one line of stdout; anything else
    printed while answering goes to stderr."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a notebook interrupts the check, not this
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        replies.write(json.dumps(answer(json.loads(line))) + "\n")
        replies.flush()
