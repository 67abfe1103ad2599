"""`cuda.fp16`: half-precision intrinsics, each result a float16 (or a bool for comparisons), as numba-cuda
types them.

Arithmetic rounds once to float16 (computing in float32 first rounds the same way: float32 has more than twice
float16's bits); `hfma` rounds the exact a * b + c once. The transcendental functions are computed in float32
and rounded to float16; a GPU's approximate instructions may differ from them in the last bit. `hmax` and
`hmin`
return the other operand when one is NaN, as CUDA's __hmax and __hmin do.
"""

import numpy as np

from .errors import UnsupportedError
from .numeric import fused_multiply_add

_H = np.float16
_F = np.float32


def _half(x):
    return x if type(x) is _H else _H(x)


def _unary(function):
    def intrinsic(x):
        with np.errstate(all="ignore"):
            return _H(function(_F(_half(x))))

    return intrinsic


def _binary(function):
    def intrinsic(a, b):
        with np.errstate(all="ignore"):
            return _H(function(_F(_half(a)), _F(_half(b))))

    return intrinsic


def _compare(function):
    def intrinsic(a, b):
        return bool(function(_half(a), _half(b)))

    return intrinsic


def hfma(a, b, c):
    """a * b + c, rounded once to float16."""
    return fused_multiply_add(_half(a), _half(b), _half(c), _H)


def hmax(a, b):
    a, b = _half(a), _half(b)
    return _H(np.fmax(a, b))


def hmin(a, b):
    a, b = _half(a), _half(b)
    return _H(np.fmin(a, b))


FUNCTIONS = {
    "hadd": _binary(np.add), "hsub": _binary(np.subtract), "hmul": _binary(np.multiply),
    "hdiv": _binary(np.divide), "hfma": hfma, "hmax": hmax, "hmin": hmin,
    "hneg": _unary(np.negative), "habs": _unary(np.abs),
    "hsin": _unary(np.sin), "hcos": _unary(np.cos), "hlog": _unary(np.log), "hlog2": _unary(np.log2),
    "hlog10": _unary(np.log10), "hexp": _unary(np.exp), "hexp2": _unary(np.exp2),
    "hexp10": _unary(lambda x: np.power(_F(10), x)), "hsqrt": _unary(np.sqrt),
    "hrsqrt": _unary(lambda x: _F(1) / np.sqrt(x)), "hrcp": _unary(lambda x: _F(1) / x),
    "hceil": _unary(np.ceil), "hfloor": _unary(np.floor), "htrunc": _unary(np.trunc),
    "hrint": _unary(np.rint), "htanh": _unary(np.tanh),
    "heq": _compare(np.equal), "hne": _compare(np.not_equal), "hge": _compare(np.greater_equal),
    "hgt": _compare(np.greater), "hle": _compare(np.less_equal), "hlt": _compare(np.less),
}


class Fp16:
    """The namespace kernels see as `cuda.fp16`."""

    def __getattr__(self, name):
        function = FUNCTIONS.get(name.removeprefix("__"))
        if function is None:
            raise UnsupportedError(f"cuda.fp16.{name}")
        return function


for _name, _function in FUNCTIONS.items():
    _function.__name__ = _function.__qualname__ = _name
    setattr(Fp16, _name, staticmethod(_function))
