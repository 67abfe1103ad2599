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
    """math.trunc; of a NumPy number, a float as numba-cuda types it (float32 stays float32, an integer
    becomes a float64): NumPy's scalars have no __trunc__ for Python's."""
    if isinstance(x, np.floating):
        return np.trunc(x)
    if isinstance(x, np.integer):
        return np.float64(x)
    return math.trunc(x)


def gpu_round(x, ndigits=None):
    """round(): with ndigits, a NumPy float is rounded as numba-cuda rounds it (in float64: scale by a power
    of ten, round half to even, scale back; CPython's fallback algorithm), and keeps its type."""
    if ndigits is None or not isinstance(x, np.floating):
        return round(x) if ndigits is None else round(x, ndigits)
    value, ndigits = float(x), int(ndigits)
    if math.isinf(value) or math.isnan(value):
        return x
    if ndigits >= 0:
        pow1, pow2 = (10.0 ** (ndigits - 22), 1e22) if ndigits > 22 else (10.0 ** ndigits, 1.0)
        y = (value * pow1) * pow2
        if math.isinf(y):
            return x
    else:
        pow1 = 10.0 ** -ndigits
        y = value / pow1
    z = float(round(y))
    if math.fabs(y - z) == 0.5:
        z = 2.0 * round(y / 2.0)
    z = (z / pow2) / pow1 if ndigits >= 0 else z * pow1
    return type(x)(z)


BUILTINS = {"round": gpu_round}  # builtins that a kernel sees as a GPU computes them


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
