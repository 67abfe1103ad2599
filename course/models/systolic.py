"""A weight-stationary systolic array, as in Google's TPU v1, simulated clock by clock.

The array has `rows` x `cols` processing elements (PEs). For one *pass*, PE (i, j) holds the weight W[i, j].
Every clock, each PE takes the activation arriving from its left neighbour (column 0: the value fed into its
row) and the partial sum arriving from the PE above (row 0: zero); it multiplies the activation by its weight,
adds the product to the partial sum, and hands both on: the activation to the right, the sum down. The state
of the array is two registers per PE: `a` (the activation it holds) and `s` (the partial sum it computed).

Inputs enter *skewed*: element i of input vector m enters row i at cycle m + i, so that it meets the partial
sum of vector m coming down column j at PE (i, j) in cycle m + i + j. Column j's dot product for vector m
leaves the bottom row at the end of cycle m + rows - 1 + j.

A product X (M x K) @ W (K x N) is cut into cdiv(K, rows) x cdiv(N, cols) weight tiles, each zero-padded to
the array's size. Each tile is one pass that streams the M rows of X (their slice of K) through the array; the
outputs of passes over the same columns of W add up. A pass ends when the array has drained: the last vector
enters row 0 in cycle M - 1 and its last sum leaves column cols - 1 at the end of cycle
M + rows + cols - 3, so a pass takes M + rows + cols - 2 cycles. Loading a tile's weights is not counted (a
TPU v1 PE holds two weights and loads the next tile while it computes).
"""

from dataclasses import dataclass

import numpy as np


def cdiv(a, b):
    return -(-a // b)


def step(weights, a, s, x_left):
    """One clock of the whole array: the new activation and partial-sum registers (all (rows, cols) arrays;
    `x_left` has one value per row)."""
    a_new = np.empty_like(a)
    a_new[:, 0] = x_left
    a_new[:, 1:] = a[:, :-1]
    s_new = weights * a_new
    s_new[1:, :] += s[:-1, :]
    return a_new, s_new


def feed(X, cycle, rows):
    """The values entering the array's left edge in `cycle`: row i gets X[cycle - i, i], 0 where there is none
    (before the first vector, after the last one, and below the K rows of X's slice)."""
    m_count, k_count = X.shape
    x_left = np.zeros(rows, dtype=X.dtype)
    for i in range(min(rows, k_count)):
        m = cycle - i
        if 0 <= m < m_count:
            x_left[i] = X[m, i]
    return x_left


def pass_cycles(m_count, rows, cols):
    """Cycles of one pass of m_count vectors: one per vector, plus the latency of the last one's sum
    through the array (rows + cols - 2), paid once per pass."""
    return m_count + rows + cols - 2


def passes(k_count, n_count, rows, cols):
    """Weight tiles of a K x N matrix on a rows x cols array."""
    return cdiv(k_count, rows) * cdiv(n_count, cols)


def cycle_count(m_count, k_count, n_count, rows, cols):
    """Cycles of X (M x K) @ W (K x N) on the array, passes one after another."""
    return passes(k_count, n_count, rows, cols) * pass_cycles(m_count, rows, cols)


def cycle_count_overlapped(m_count, k_count, n_count, rows, cols):
    """Cycles with the passes streamed back to back, as a real array runs them: each PE holds two weights,
    the next tile's is shifted in (one row per cycle: `rows` cycles) while the current pass runs, and each PE
    switches to it as the last vector goes by. A pass then lasts max(M, rows) cycles (it cannot be shorter
    than its tile's shift), and the latency rows + cols - 2 is paid once for the whole product."""
    return passes(k_count, n_count, rows, cols) * max(m_count, rows) + rows + cols - 2


def utilisation(m_count, k_count, n_count, rows, cols, overlapped=False):
    """Useful multiply-adds (M·K·N) over the PE-cycles the product occupies the array (passes one after
    another, or streamed back to back)."""
    count = cycle_count_overlapped if overlapped else cycle_count
    return m_count * k_count * n_count / (rows * cols * count(m_count, k_count, n_count, rows, cols))


def busy(cycle, m_count, k_count, n_count, rows, cols):
    """(rows, cols) booleans: the PEs doing a useful multiply-add in `cycle` of a pass with m_count vectors
    and a k_count x n_count weight tile."""
    i, j = np.indices((rows, cols))
    m = cycle - i - j
    return (m >= 0) & (m < m_count) & (i < k_count) & (j < n_count)


@dataclass
class Cycle:
    """The array after one clock of a pass: what entered, the registers, the sums that left, who was busy."""

    cycle: int
    x_left: np.ndarray
    a: np.ndarray
    s: np.ndarray
    out: dict  # vector m -> {column j: sum} leaving the bottom row at the end of this cycle
    busy: np.ndarray


def run_pass(X, weights, step=step, feed=feed, on_cycle=None, tile_cols=None):
    """Stream the rows of X (M x k, k <= rows) through the array loaded with `weights` (rows x cols) for
    pass_cycles(M, rows, cols) clocks; returns the (M, cols) outputs. `step` and `feed` may be replaced (an
    exercise does); `on_cycle(Cycle)` sees the array after every clock; `tile_cols` is how many columns of
    `weights` hold the real tile (for the busy map; all of them by default)."""
    rows, cols = weights.shape
    m_count, k_count = X.shape
    a = np.zeros((rows, cols), dtype=np.float64)
    s = np.zeros((rows, cols), dtype=np.float64)
    Y = np.zeros((m_count, cols), dtype=np.float64)
    for cycle in range(pass_cycles(m_count, rows, cols)):
        x_left = feed(X, cycle, rows)
        a, s = step(weights, a, s, x_left)
        a, s = np.asarray(a, dtype=np.float64), np.asarray(s, dtype=np.float64)
        leaving = {}
        for j in range(cols):
            m = cycle - (rows - 1) - j
            if 0 <= m < m_count:
                Y[m, j] = s[rows - 1, j]
                leaving.setdefault(m, {})[j] = s[rows - 1, j]
        if on_cycle is not None:
            on_cycle(Cycle(cycle, np.array(x_left, dtype=np.float64), a.copy(), s.copy(), leaving,
                           busy(cycle, m_count, k_count, tile_cols or cols, rows, cols)))
    return Y


@dataclass
class Counts:
    """What a product cost on the array."""

    passes: int
    cycles: int
    macs: int  # useful multiply-adds: M·K·N
    pe_cycles: int  # rows·cols·cycles

    @property
    def utilisation(self):
        return self.macs / self.pe_cycles


def matmul(X, W, rows, cols, step=step, feed=feed, on_pass=None):
    """X @ W on a rows x cols array, tile by tile (cut as the module docstring says); returns (Y, Counts).
    `on_pass(k0, n0, Y_tile)` sees each pass's outputs."""
    X, W = np.asarray(X, dtype=np.float64), np.asarray(W, dtype=np.float64)
    m_count, k_count = X.shape
    n_count = W.shape[1]
    Y = np.zeros((m_count, n_count))
    cycles = 0
    for k0 in range(0, k_count, rows):
        for n0 in range(0, n_count, cols):
            tile = np.zeros((rows, cols))
            block = W[k0:k0 + rows, n0:n0 + cols]
            tile[: block.shape[0], : block.shape[1]] = block
            part = run_pass(X[:, k0:k0 + rows], tile, step, feed, tile_cols=block.shape[1])
            Y[:, n0:n0 + cols] += part[:, : block.shape[1]]
            cycles += pass_cycles(m_count, rows, cols)
            if on_pass is not None:
                on_pass(k0, n0, part[:, : block.shape[1]])
    counts = Counts(passes(k_count, n_count, rows, cols), cycles, m_count * k_count * n_count,
                    rows * cols * cycles)
    return Y, counts


def trace(X, W):
    """Every cycle of one pass of X (M x K) through an array exactly the size of W (K x N), as Cycles."""
    cycles = []
    run_pass(np.asarray(X, dtype=np.float64), np.asarray(W, dtype=np.float64), on_cycle=cycles.append)
    return cycles
