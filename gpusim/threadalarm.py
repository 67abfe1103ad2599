"""The timeout of a launch made outside the main thread, where no SIGALRM arrives: a timer thread raises
KernelTimeoutError in the launching thread (CPython delivers it between two bytecodes, as a signal handler's
exception is delivered in the main thread), so that a kernel looping without barriers still stops."""

import ctypes
import threading
import time
from contextlib import contextmanager

from .errors import KernelTimeoutError


def _set_async_exception(thread_id, exception_class):
    """Have `thread_id` raise `exception_class` at its next bytecode (None: withdraw a pending one)."""
    exception = None if exception_class is None else ctypes.py_object(exception_class)
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), exception)


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
    try:
        yield
    finally:
        with lock:
            state["running"] = False
            if state["fired"]:  # the launch ended before the exception arrived: withdraw it
                _set_async_exception(target, None)
        timer.cancel()
