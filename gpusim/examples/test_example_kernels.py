"""Testing your own Numba CUDA kernels with gpusim, in pytest, on a machine without a GPU.

Copy this file into your project's tests. Each test launches a kernel under gpusim, compares its result with
NumPy, and asserts what gpusim found (a race, a divergent barrier, an index out of bounds, negative ones
included) or counted (memory traffic). It needs numpy, greenlet, numba-cuda and pytest; no GPU, and no
NUMBA_ENABLE_CUDASIM (it works with it set, too).
"""

import numpy as np
import pytest
from numba import cuda, float32

import gpusim

THREADS = 64


@cuda.jit
def block_sums(a, out):
    """out[b] = sum of block b's slice of a: a tree reduction in shared memory."""
    partial = cuda.shared.array(THREADS, float32)
    t, i = cuda.threadIdx.x, cuda.grid(1)
    partial[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]


@cuda.jit
def block_sums_no_barrier(a, out):
    """The same reduction with the barrier inside the loop forgotten: threads read partial sums too early."""
    partial = cuda.shared.array(THREADS, float32)
    t, i = cuda.threadIdx.x, cuda.grid(1)
    partial[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]


@cuda.jit
def block_sums_divergent_barrier(a, out):
    """The barrier moved inside `if t < stride`: only some threads reach it, which hangs or corrupts a GPU."""
    partial = cuda.shared.array(THREADS, float32)
    t, i = cuda.threadIdx.x, cuda.grid(1)
    partial[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
            cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]


@cuda.jit
def differences(a, out):
    """out[i] = a[i] - a[i - 1]: at i = 0 it reads a[-1], which Numba wraps (to the last element) on GPUs."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] - a[i - 1]


def blocks_for(n):
    return (n + THREADS - 1) // THREADS


@pytest.mark.parametrize("n", [1, 64, 1000])
@pytest.mark.parametrize("schedule", ["sequential", "random"])
def test_block_sums_are_right_in_any_thread_order(n, schedule):
    a = np.random.default_rng(n).random(n, dtype=np.float32)
    out = np.zeros(blocks_for(n), np.float32)
    gpusim.jit(block_sums, schedule=schedule, seed=n)[blocks_for(n), THREADS](a, out)
    expected = [a[b * THREADS:(b + 1) * THREADS].sum() for b in range(blocks_for(n))]
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_block_sums_read_each_input_once_in_full_sectors():
    a, out = np.ones(1024, np.float32), np.zeros(16, np.float32)
    kernel = gpusim.jit(block_sums)
    kernel[16, THREADS](a, out)
    report = kernel.report
    assert report.global_loads == a.size and report.global_stores == out.size
    # the loads fill whole 32-byte sectors (32 lanes read 32 neighbours); each block's one store takes one
    assert report.global_sectors == a.nbytes // 32 + out.size
    assert report.max_block_barriers == 1 + 6  # one after the load, one per halving of 64


def test_a_forgotten_barrier_is_a_race():
    a, out = np.ones(THREADS, np.float32), np.zeros(1, np.float32)
    with pytest.raises(gpusim.RaceError, match=r"partial\[\d+\]"):
        gpusim.jit(block_sums_no_barrier)[1, THREADS](a, out)


def test_a_barrier_that_only_some_threads_reach_is_an_error():
    a, out = np.ones(THREADS, np.float32), np.zeros(1, np.float32)
    with pytest.raises(gpusim.BarrierError):
        gpusim.jit(block_sums_divergent_barrier)[1, THREADS](a, out)


def test_a_negative_index_is_out_of_bounds_not_wrapped():
    a, out = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
    with pytest.raises(gpusim.OutOfBoundsError, match=r"-1"):
        gpusim.jit(differences)[blocks_for(100), THREADS](a, out)
