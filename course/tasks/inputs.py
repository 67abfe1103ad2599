"""Input families shared by several contracts: values that cover a domain, extremes included, without gaps.

A family draws every value of a case from one distribution. Magnitudes are drawn log-uniformly over the
whole range a domain allows (``signed_magnitudes``), never from two separate bands, so that no band of
values lies between what the checks draw.
"""

from __future__ import annotations

import numpy as np

from .contract import Family

# |a| @ |b| must stay finite in float32 (about 3.4e38) for K up to 2**16: products within 1e±30
WIDE_EXPONENTS = (-15.0, 15.0)

MATMUL_FAMILIES = (
    Family("uniform", "uniform in [-1, 1], with a zero row in a and a zero column in b"),
    Family("wide", "signs at random, magnitudes log-uniform from 1e-15 to 1e15, a tenth of them 0"),
    Family("zero_lines",
           "uniform in [-1, 1] with a third of the rows of a and of the columns of b all zero"),
    Family("equal", "every element of a the same value, and every element of b another (from [-2, 2])"),
    Family("small", "uniform in [-1, 1] times one factor for a and another for b, each log-uniform from "
                    "1e-12 to 1e-6: every product tiny, and every one of them counts"),
)


def signed_magnitudes(rng: np.random.Generator, shape, exponents=WIDE_EXPONENTS, zeros: float = 0.1):
    """float64 values with random signs and magnitudes 10**U(exponents), a fraction ``zeros`` of them 0."""
    values = rng.choice((-1.0, 1.0), size=shape) * 10.0 ** rng.uniform(*exponents, size=shape)
    values[rng.random(shape) < zeros] = 0.0
    return values


def matmul_pair(family: str, m: int, k: int, n: int, rng: np.random.Generator, uniform=None):
    """float32 a (m x k) and b (k x n) of one of MATMUL_FAMILIES; ``uniform(m, k, n, rng)`` replaces the
    "uniform" family (a part keeps the inputs its explicit examples always had)."""
    if family == "uniform" and uniform is not None:
        return uniform(m, k, n, rng)
    if family == "wide":
        a, b = signed_magnitudes(rng, (m, k)), signed_magnitudes(rng, (k, n))
    elif family == "small":
        a = rng.uniform(-1.0, 1.0, size=(m, k)) * 10.0 ** rng.uniform(-12, -6)
        b = rng.uniform(-1.0, 1.0, size=(k, n)) * 10.0 ** rng.uniform(-12, -6)
    elif family == "equal":
        a, b = np.full((m, k), rng.uniform(-2, 2)), np.full((k, n), rng.uniform(-2, 2))
    elif family in ("uniform", "zero_lines"):
        a, b = rng.uniform(-1.0, 1.0, size=(m, k)), rng.uniform(-1.0, 1.0, size=(k, n))
        share = 3 if family == "zero_lines" else max(m, n, 3)
        a[rng.permutation(m)[: max(1, m // share)] if m >= 3 else []] = 0.0
        b[:, rng.permutation(n)[: max(1, n // share)] if n >= 3 else []] = 0.0
    else:
        raise ValueError(f"no input family {family!r}")
    return a.astype(np.float32), b.astype(np.float32)


def matmul_scale(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a| @ |b| in float64: the size of the terms each element of a @ b sums, against which a float32
    kernel's rounding is measured (cancellation makes |a @ b| itself a poor yardstick)."""
    return np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
