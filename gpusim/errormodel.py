"""Division by zero as Numba's error models have it: a kernel compiled with `debug=True` raises
ZeroDivisionError (the "python" model); otherwise a float division by zero gives inf or NaN and an integer
one gives 0, silently (the "numpy" model). gpusim runs a launch under the matching NumPy error state."""

import numpy as np


def debug_of(kernel):
    """Whether the kernel was compiled with debug=True (a numba-cuda dispatcher or a simulator kernel)."""
    options = getattr(kernel, "targetoptions", None)
    if isinstance(options, dict):
        return bool(options.get("debug"))
    return bool(getattr(kernel, "_debug", False))


def _zero_division(kind, flag):
    raise ZeroDivisionError("division by zero")


def error_state(debug):
    """The NumPy error state a launch runs under (a context manager)."""
    if debug:
        return np.errstate(divide="call", over="ignore", under="ignore", invalid="ignore",
                           call=_zero_division)
    return np.errstate(all="ignore")
