"""The timeout of a launch made outside the main thread, where no SIGALRM arrives: a timer thread raises
KernelTimeoutError in the launching thread (CPython delivers it between two bytecodes, as a signal handler's
exception is delivered in the main thread), so that a kernel looping without barriers still stops."""

import ctypes
import threading
import time
from contextlib import contextmanager

from .errors import KernelTimeoutError


def _set_async_exception(thread_id, exception_class):
    """Have `thread_id` raise `exception_class` at its next bytecode.

    Never withdrawn (PyThreadState_SetAsyncExc with NULL): in CPython 3.11 that leaves the interpreter's
    eval breaker set for good, and from then on a function called under a profile function (the checks'
    guard of learner code, a profiler) never starts."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exception_class))


def _receive(exception_class):
    """Let a pending asynchronous `exception_class` of this thread arrive here, and drop it (CPython
    delivers it at the next backward jump)."""
    try:
        for _ in range(10_000):
            pass
    except exception_class:
        pass


@contextmanager
def thread_alarm(timeout, start):
    """Raise KernelTimeoutError in this thread `timeout` seconds after `start`, unless the block ends
    first."""
    message = f"the launch ran longer than its timeout of {timeout} s and was stopped."

    class LaunchTimeout(KernelTimeoutError):
        def __init__(self):
            super().__init__(message)

    LaunchTimeout.__name__ = LaunchTimeout.__qualname__ = "KernelTimeoutError"
    target = threading.get_ident()
    state = {"running": True, "fired": False}
    lock = threading.Lock()

    def fire():
        with lock:
            if state["running"]:
                state["fired"] = True
                _set_async_exception(target, LaunchTimeout)

    timer = threading.Timer(max(timeout - (time.monotonic() - start), 1e-3), fire)
    timer.daemon = True
    timer.start()
    arrived = False
    try:
        yield
    except LaunchTimeout:
        arrived = True
        raise
    finally:
        with lock:
            state["running"] = False
            fired = state["fired"]
        timer.cancel()
        if fired and not arrived:  # the launch ended before the exception arrived: take it here
            _receive(LaunchTimeout)
