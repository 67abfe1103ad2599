"""Scalars as Numba types them, and exact rounding of a result to a float type.

A kernel's scalar argument or an intrinsic's result has the type numba-cuda gives it: a Python int is an
int64,
a float a float64, a bool a boolean; NumPy scalars keep their dtype. `round_exact` rounds an exact result
(a Fraction) to float16, float32 or float64 once, as a fused instruction (fma, __hfma) does.
"""

import math
import numbers
from fractions import Fraction

import numpy as np

INT64_MAX = 2**63 - 1


def numba_scalar(value):
    """`value` as the NumPy scalar of the type Numba gives it (NumPy scalars unchanged)."""
    if isinstance(value, np.generic):
        return value
    if isinstance(value, bool):
        return value  # a Python bool behaves as Numba's boolean (`x is True` included)
    if isinstance(value, numbers.Integral):
        value = int(value)
        if -INT64_MAX - 1 <= value <= INT64_MAX:
            return np.int64(value)
        if 0 <= value < 2**64:
            return np.uint64(value)
        raise OverflowError(f"{value} does not fit in 64 bits, as Numba needs")
    if isinstance(value, numbers.Real):
        return np.float64(value)
    if isinstance(value, numbers.Complex):
        return np.complex128(value)
    return value


def cast(value, dtype):
    """`value` converted to `dtype` as C converts (integers wrap), as Numba converts an argument to the type a
    signature declares."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and isinstance(value, (numbers.Integral, np.integer)):
        bits = 8 * dtype.itemsize
        wrapped = int(value) & ((1 << bits) - 1)
        if dtype.kind == "i" and wrapped >= 1 << (bits - 1):
            wrapped -= 1 << bits
        return dtype.type(wrapped)
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(dtype)[()]


def _neighbours(value, dtype):
    """The two values of `dtype` around the float64 `value` (one value twice when `value` is one of them)."""
    low = dtype.type(value)
    if float(low) > value:
        return np.nextafter(low, dtype.type(-np.inf)), low
    if float(low) < value:
        return low, np.nextafter(low, dtype.type(np.inf))
    return low, low


def round_exact(exact, dtype):
    """The `dtype` (float16, float32 or float64) nearest to the Fraction `exact`, ties to even: one
    rounding."""
    dtype = np.dtype(dtype)
    nearest = float(exact)  # Fraction -> float64 rounds correctly
    if dtype == np.float64 or not math.isfinite(nearest) or Fraction(nearest) == exact:
        return dtype.type(nearest)
    low, high = _neighbours(nearest, dtype)
    if low == high or not (np.isfinite(low) and np.isfinite(high)):
        return dtype.type(nearest)  # `exact` is within half a float64 step of a value of `dtype`
    middle = (Fraction(float(low)) + Fraction(float(high))) / 2
    if exact != middle:
        return low if exact < middle else high
    return low if int(np.array(low).view(f"u{dtype.itemsize}")) % 2 == 0 else high


def fused_multiply_add(a, b, c, dtype):
    """a * b + c rounded once to `dtype`, as the GPU's fma instruction computes it."""
    dtype = np.dtype(dtype)
    a, b, c = (float(x) for x in (a, b, c))
    if not all(math.isfinite(x) for x in (a, b, c)):
        with np.errstate(all="ignore"):
            return dtype.type(dtype.type(a) * dtype.type(b) + dtype.type(c))
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:  # IEEE: -0 only when the product and c are both zeros of negative sign
        negative = (a == 0 or b == 0) and c == 0 and math.copysign(1, a) * math.copysign(1, b) < 0 \
            and math.copysign(1, c) < 0
        return dtype.type(-0.0 if negative else 0.0)
    return round_exact(exact, dtype)


def cube_root(x, dtype):
    """The `dtype` nearest to the real cube root of x (ties never occur): NumPy's cbrt, corrected by comparing
    the cubes of its neighbours with x exactly."""
    dtype = np.dtype(dtype)
    guess = np.cbrt(dtype.type(x))
    if not math.isfinite(float(guess)) or guess == 0:
        return guess
    target = Fraction(float(dtype.type(x)))
    below, above = np.nextafter(guess, dtype.type(-np.inf)), np.nextafter(guess, dtype.type(np.inf))
    return min((below, guess, above), key=lambda y: abs(Fraction(float(y)) ** 3 - target))

