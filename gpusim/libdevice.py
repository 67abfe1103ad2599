"""`numba.cuda.libdevice` in kernels: NumPy models of libdevice's math and integer functions.

Each function takes and returns the types numba-cuda's table gives it (numba.cuda.libdevicefuncs): its
arguments are converted to them, and pointer arguments, which libdevice writes, come back as the function's
results after its return value (`s, c = libdevice.sincos(x)`, `frac, exp = libdevice.frexp(x)`), as numba-cuda
returns them. A name ending in `f` is the float32 version of the same function; `fast_` versions are modelled
like the exact ones. A function with no model here is refused by name.
"""

import math

import numpy as np

from .errors import UnsupportedError
from .numeric import cast, cube_root, fused_multiply_add


def _c_round(x):
    """C's round: halfway cases away from zero."""
    return np.copysign(np.floor(np.abs(x) + x.dtype.type(0.5)), x)


_FLOAT = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(x.dtype.type(10), x),
    "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "rsqrt": lambda x: x.dtype.type(1) / np.sqrt(x), "cbrt": lambda x: cube_root(x, x.dtype),
    "rcbrt": lambda x: x.dtype.type(1) / cube_root(x, x.dtype), "fabs": np.abs, "floor": np.floor,
    "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint, "nearbyint": np.rint, "round": _c_round,
    "erf": np.vectorize(math.erf), "erfc": np.vectorize(math.erfc), "lgamma": np.vectorize(math.lgamma),
    "tgamma": np.vectorize(math.gamma), "fmin": np.fmin, "fmax": np.fmax, "fmod": np.fmod,
    "hypot": np.hypot, "atan2": np.arctan2, "pow": np.power, "copysign": np.copysign,
    "nextafter": np.nextafter, "fdim": lambda x, y: np.maximum(x - y, x.dtype.type(0)),
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "signbit": np.signbit,
    "sincos": lambda x: (np.sin(x), np.cos(x)), "frexp": np.frexp, "modf": lambda x: np.modf(x)[::-1],
    "ldexp": np.ldexp, "scalbn": np.ldexp,
}
_WORD, _LONG = 2**32 - 1, 2**64 - 1
_INTEGER = {
    "abs": abs, "llabs": abs, "min": min, "max": max, "umin": min, "umax": max, "llmin": min, "llmax": max,
    "ullmin": min, "ullmax": max, "sad": lambda x, y, z: abs(int(x) - int(y)) + int(z),
    "usad": lambda x, y, z: abs(int(x) - int(y)) + int(z),
    "popc": lambda x: bin(int(x) & _WORD).count("1"), "popcll": lambda x: bin(int(x) & _LONG).count("1"),
    "ffs": lambda x: (int(x) & -int(x) & _WORD).bit_length(),
    "ffsll": lambda x: (int(x) & -int(x) & _LONG).bit_length(),
    "clz": lambda x: 32 - (int(x) & _WORD).bit_length(),
    "clzll": lambda x: 64 - (int(x) & _LONG).bit_length(),
    "brev": lambda x: int(format(int(x) & _WORD, "032b")[::-1], 2),
    "brevll": lambda x: int(format(int(x) & _LONG, "064b")[::-1], 2),
}
_cache = {}


def _model(name):
    base = name.removeprefix("fast_")
    if base in _INTEGER:
        return _INTEGER[base]
    if base in ("fma", "fmaf"):
        return None
    if base in _FLOAT:
        return _FLOAT[base]
    if base.endswith("f") and base[:-1] in _FLOAT:
        return _FLOAT[base[:-1]]
    return None


def _dtype(numba_type):
    return np.dtype(str(numba_type))


def function(name):
    """The model of libdevice.`name`, typed by numba-cuda's table of libdevice functions."""
    made = _cache.get(name)
    if made is not None:
        return made
    from numba.cuda.libdevicefuncs import functions

    spec = functions.get(f"__nv_{name}")
    model = _model(name)
    if spec is None or (model is None and name.removeprefix("fast_") not in ("fma", "fmaf")):
        def refused(*args):
            raise UnsupportedError(f"libdevice.{name}")

        return refused
    return_type, parameters = spec
    inputs = [_dtype(p.ty) for p in parameters if not p.is_ptr]
    outputs = ([] if str(return_type) == "none" else [_dtype(return_type)]) + \
        [_dtype(p.ty) for p in parameters if p.is_ptr]

    def call(*args):
        values = [cast(a, d) for a, d in zip(args, inputs, strict=True)]
        with np.errstate(all="ignore"):
            if model is None:  # fma: one rounding
                result = fused_multiply_add(*values, inputs[0])
            else:
                result = model(*values)
        results = result if isinstance(result, tuple) else (result,)
        typed = tuple(cast(r, d) for r, d in zip(results, outputs, strict=True))
        return typed if len(typed) > 1 else typed[0]

    call.__name__ = call.__qualname__ = name
    _cache[name] = call
    return call


class Libdevice:
    """The namespace kernels see as numba.cuda.libdevice."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return function(name)


def stand_in(value):
    """The model of a function imported from numba.cuda.libdevice by name, else None."""
    if callable(value) and getattr(value, "__module__", None) == "numba.cuda.libdevice":
        return function(value.__name__)
    return None

