"""`math` as a GPU computes it: where Python's math raises (log(0), sqrt(-1), exp(1000)), CUDA returns IEEE
infinities and NaNs, and so does the `math` that simulated kernels see."""

import math
import types

import numpy as np

_NUMPY_NAMES = {"pow": "power", "fabs": "abs", "atan2": "arctan2", "acos": "arccos", "asin": "arcsin",
                "atan": "arctan", "acosh": "arccosh", "asinh": "arcsinh", "atanh": "arctanh"}


def _ieee(name, function):
    """`function` (from math), returning numpy's IEEE result where math would raise a domain or range
    error."""
    fallback = getattr(np, _NUMPY_NAMES.get(name, name), None)
    if not isinstance(fallback, np.ufunc):
        return function

    def gpu_function(*args):
        try:
            return function(*args)
        except TypeError:  # math.ldexp and friends take Python ints only, and a kernel's ints are NumPy's
            if not any(isinstance(a, np.integer) for a in args):
                raise
            return gpu_function(*(int(a) if isinstance(a, np.integer) else a for a in args))
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(fallback(*(float(a) for a in args)))

    gpu_function.__name__ = gpu_function.__qualname__ = name
    gpu_function.__doc__ = function.__doc__
    return gpu_function


def trunc(x):
    """math.trunc; of a NumPy float, a float of its type (as numba-cuda types it: NumPy's float32 has no
    __trunc__ for Python's)."""
    if isinstance(x, np.floating):
        return np.trunc(x)
    return math.trunc(x)


def _gpu_math():
    module = types.ModuleType("gpusim.gpumath.math", __doc__)
    for name in dir(math):
        value = getattr(math, name)
        setattr(module, name, _ieee(name, value) if callable(value) and not name.startswith("_") else value)
    module.trunc = trunc
    return module


math_module = _gpu_math()


def gpu_function(value):
    """The GPU-behaving counterpart of a function taken from `math` (`from math import exp`), else None."""
    if getattr(value, "__self__", None) is math:
        return getattr(math_module, value.__name__, None)
    return None
