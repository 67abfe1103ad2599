"""numba-cuda's scalar intrinsics as a GPU computes them, each result of the type numba-cuda gives it: bit
intrinsics (popc, brev, clz, ffs), cbrt, fma, selp, nanosleep, and loads and stores with cache hints."""

import sys

import numpy as np

from .arrays import READ, WRITE, DeviceArray
from .numeric import cube_root, fused_multiply_add, numba_scalar

_getframe = sys._getframe


def _integer(x, name):
    """(x as an unsigned int of its width, the width, the NumPy type numba-cuda gives x)."""
    x = numba_scalar(x)
    if not isinstance(x, np.integer):
        raise TypeError(f"cuda.{name} takes an integer, not {type(x).__name__}")
    bits = 8 * x.dtype.itemsize
    return int(x) & ((1 << bits) - 1), bits, type(x)


def popc(x):
    """The number of bits set in x, of x's type."""
    value, _, kind = _integer(x, "popc")
    return kind(bin(value).count("1"))


def brev(x):
    """x's bits in reverse order: a uint32 for 32-bit (and narrower) integers, else a uint64."""
    value, bits, _ = _integer(x, "brev")
    bits = 32 if bits <= 32 else 64
    return (np.uint32 if bits == 32 else np.uint64)(int(format(value, f"0{bits}b")[::-1], 2))


def clz(x):
    """The number of zero bits above x's highest set bit, within x's width; of x's type."""
    value, bits, kind = _integer(x, "clz")
    return kind(bits - value.bit_length())


def ffs(x):
    """The position (from 1) of x's lowest set bit, 0 when none is set; a uint32."""
    value, _, _ = _integer(x, "ffs")
    return np.uint32((value & -value).bit_length())


def cbrt(x):
    """The cube root in x's float type (a Python float is a float64), rounded correctly."""
    x = numba_scalar(x)
    return cube_root(x, x.dtype if isinstance(x, np.floating) else np.float64)


def fma(a, b, c):
    """a * b + c with one rounding, in the widest float type of the three (float32 unless one is a
    float64)."""
    types = [numba_scalar(v) for v in (a, b, c)]
    wide = any(isinstance(v, np.float64) or not isinstance(v, np.floating) for v in types)
    return fused_multiply_add(a, b, c, np.float64 if wide else np.float32)


def selp(test, a, b):
    """a if test else b, as the PTX instruction selp selects."""
    return a if test else b


def nanosleep(ns):
    """Sleeps on a GPU; here nothing happens (no thread waits for time)."""
    return None


def _load(array, index, frame):
    if isinstance(array, DeviceArray):
        return array._access(index, frame, READ)
    return array[index]


def _store(array, index, value, frame):
    if isinstance(array, DeviceArray):
        array._access(index, frame, WRITE, value)
    else:
        array[index] = value


def _cache_load(hint):
    def load(array, i):
        return _load(array, i, _getframe(1))

    load.__name__ = load.__qualname__ = f"ld{hint}"
    load.__doc__ = f"array[i], loaded with the cache hint .{hint} (a hint only: the value is the same)."
    return load


def _cache_store(hint):
    def store(array, i, value):
        _store(array, i, value, _getframe(1))

    store.__name__ = store.__qualname__ = f"st{hint}"
    store.__doc__ = f"array[i] = value, stored with the cache hint .{hint} (a hint only)."
    return store


CACHE_HINTS = {f"ld{hint}": _cache_load(hint) for hint in ("ca", "cg", "cs", "lu", "cv")}
CACHE_HINTS.update({f"st{hint}": _cache_store(hint) for hint in ("cg", "cs", "wb", "wt")})
