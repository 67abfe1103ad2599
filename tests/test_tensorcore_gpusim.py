"""The tensor-core matmul of course/kernels/tensorcore.py on the CPU: gpusim stands in for the linked
mma.sync with a NumPy model (gpusim/linked.py), so the unchanged Numba kernel runs race-checked."""

import numpy as np
import pytest
from numba import cuda, int32

import gpusim
from course.kernels import tensorcore as tc
from gpusim.linked import MMA_LAYOUT, LinkedFunctionError, bf16_pairs

mma = tc.mma_bf16_16816  # kernels call it by a global name, as the generated kernels do


def bf16(rng, shape):
    """Random numbers that are exactly bfloat16, and their 16-bit patterns."""
    bits = (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return (bits.astype(np.uint32) << 16).view(np.float32), bits


@cuda.jit
def one_mma(A, B, C, D):
    """Each lane packs its fragments straight from the PTX ISA's m16n8k16 tables and runs one mma."""
    lane = cuda.threadIdx.x
    g = lane >> 2
    t = lane & 3
    a0 = A[g, t]  # A and B: int32 views of bf16 pairs (A along a row, B along a column: B is passed as B^T)
    a1 = A[g + 8, t]
    a2 = A[g, t + 4]
    a3 = A[g + 8, t + 4]
    b0 = B[g, t]
    b1 = B[g, t + 4]
    d = mma(a0, a1, a2, a3, b0, b1, C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1])
    D[g, 2 * t] = d[0]
    D[g, 2 * t + 1] = d[1]
    D[g + 8, 2 * t] = d[2]
    D[g + 8, 2 * t + 1] = d[3]


def test_mma_model_follows_the_ptx_fragment_layout():
    rng = np.random.default_rng(0)
    a, a_bits = bf16(rng, (16, 16))
    b, b_bits = bf16(rng, (16, 8))
    c = rng.standard_normal((16, 8)).astype(np.float32)
    d = np.full((16, 8), np.nan, np.float32)
    kernel = gpusim.jit(one_mma)
    kernel[1, 32](a_bits.view(np.int32), np.ascontiguousarray(b_bits.T).view(np.int32), c, d)
    np.testing.assert_allclose(d, a.astype(np.float64) @ b + c, rtol=1e-6, atol=1e-6)
    assert kernel.report.max_thread_collectives == 2  # the two syncwarps of one mma


def test_layout_tables_cover_each_tile_once():
    for name, shape in (("A", (16, 16)), ("B", (16, 8)), ("C", (16, 8))):
        cells = MMA_LAYOUT[name].reshape(-1, 2)
        assert len({tuple(x) for x in cells}) == len(cells) == shape[0] * shape[1]
    np.testing.assert_array_equal(bf16_pairs([0x3F80C000]), [[-2.0, 1.0]])  # low half first


@pytest.mark.parametrize("M,N,K", [(64, 64, 48), (32, 64, 32)])
def test_version_13_runs_race_free_under_gpusim(M, N, K):
    rng = np.random.default_rng(M + K)
    a, a_bits = bf16(rng, (M, K))
    b, b_bits = bf16(rng, (K, N))
    c = np.full((M, N), np.nan, np.float32)
    launch = tc.make_mma_matmul_simple(BM=32, BN=32, BK=16, WM=16, WN=16)
    kernel = gpusim.jit(launch.kernel)
    kernel[(N // 32, M // 32), launch.threads](a_bits.view(np.int32), b_bits.view(np.int32), c)
    exact = a.astype(np.float64) @ b
    assert np.linalg.norm(c - exact) / np.linalg.norm(exact) < 1e-6
    assert kernel.report.barriers == 2 * (K // 16) * (M // 32) * (N // 32)


@cuda.jit
def partial_warp(out):
    x = int32(cuda.threadIdx.x)
    d = mma(x, x, x, x, x, x, 0.0, 0.0, 0.0, 0.0)
    out[cuda.threadIdx.x] = d[0]


def test_a_partial_warp_is_reported():
    with pytest.raises(LinkedFunctionError, match="needs all 32"):
        gpusim.jit(partial_warp)[1, 16](np.zeros(16, np.float32))
