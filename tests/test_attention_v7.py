"""FlashAttention forward version 7 (course/kernels/attention_v7.py) under gpusim: O and the logsumexp
against a float64 NumPy reference at small, awkward sizes (N not a multiple of either tile, an odd number
of query blocks), with race, barrier and bounds checks on; and the two shapes ring attention's blocks add:
the diagonal moved by OFFSET = -1 (the first query sees no key), and fewer or more keys than queries."""

import math

import numpy as np
import pytest

import gpusim
from course.kernels.attention_v7 import make_flash_v7


def reference(q, k, v, causal, offset=0):
    """float64 O and row logsumexp (natural log) of softmax(Q K^T / sqrt(d)) V; causal: key j counts for
    query i when j <= i + offset. A row that sees no key: O = 0, logsumexp = -inf."""
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / math.sqrt(q.shape[2])
    if causal:
        s = np.where(np.arange(k.shape[1])[None, :] > np.arange(q.shape[1])[:, None] + offset, -np.inf, s)
    m = s.max(-1, keepdims=True)
    safe = np.where(np.isinf(m), 0.0, m)
    p = np.exp(s - safe)
    total = p.sum(-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num((p / total) @ v.astype(np.float64)), (safe + np.log(total))[..., 0]


CONFIGS = {  # D, BQ, BKV, TX, TY, UNROLL, BH, N: key tiles smaller / larger than query tiles, ragged N
    "a": (16, 32, 16, 4, 8, 2, 2, 50),
    "b": (32, 16, 32, 8, 4, 2, 1, 37),
    "even": (16, 32, 16, 4, 8, 2, 2, 96),  # N a multiple of both tiles: the kernel without bounds checks
}


@pytest.mark.parametrize("causal,pairs", [(False, False), (True, False), (True, True)],
                         ids=["full", "causal", "causal-pairs"])
@pytest.mark.parametrize("config", CONFIGS, ids=list(CONFIGS))
def test_v7_matches_float64_and_is_race_free(config, causal, pairs):
    D, BQ, BKV, TX, TY, U, BH, N = CONFIGS[config]
    rng = np.random.default_rng(N + causal)
    q, k, v = (rng.standard_normal((BH, N, D)).astype(np.float32) for _ in range(3))
    o = np.full((BH, N, D), np.nan, np.float32)
    lse = np.full((BH, N), np.nan, np.float32)
    launch = make_flash_v7(D, BQ, BKV, TX, TY, causal, UNROLL=U, PAIRS=pairs)
    kernel = launch(q, k, v, o, lse, wrap=gpusim.jit)  # gpusim raises on a race, barrier or bounds error
    assert kernel.py_func.generated_source == launch.source[N % BQ == 0 and N % BKV == 0]
    ref_o, ref_lse = reference(q, k, v, causal)
    error = np.linalg.norm(o - ref_o) / np.linalg.norm(ref_o)
    assert error < 1e-5, f"O: relative error {error:.1e}"
    np.testing.assert_allclose(lse, ref_lse, atol=1e-4)
    nqb, nkt = -(-N // BQ), -(-N // BKV)
    assert kernel.report.blocks == BH * ((nqb + 1) // 2 if pairs else nqb)
    # one barrier after the first loads, one per key tile visited; causal skips tiles above the diagonal
    tiles = [min(-(-(qb + 1) * BQ // BKV), nkt) if causal else nkt for qb in range(nqb)]
    assert kernel.report.barriers == BH * sum(1 + t for t in tiles)


RING_BLOCKS = {  # D, BQ, BKV, TX, TY, UNROLL, BH, N, NK, causal, OFFSET
    "stripes below the diagonal": (16, 32, 16, 4, 8, 2, 2, 64, 64, True, -1),
    "stripes below, ragged": (16, 32, 16, 4, 8, 2, 1, 45, 45, True, -1),
    "half the keys": (16, 32, 16, 4, 8, 2, 2, 64, 32, False, 0),
    "twice the keys, ragged": (16, 32, 16, 4, 8, 2, 1, 24, 48, False, 0),
}


@pytest.mark.parametrize("config", RING_BLOCKS, ids=list(RING_BLOCKS))
def test_v7_runs_ring_attention_blocks(config):
    D, BQ, BKV, TX, TY, U, BH, N, NK, causal, offset = RING_BLOCKS[config]
    rng = np.random.default_rng(N + NK)
    q = rng.standard_normal((BH, N, D)).astype(np.float32)
    k, v = (rng.standard_normal((BH, NK, D)).astype(np.float32) for _ in range(2))
    o = np.full((BH, N, D), np.nan, np.float32)
    lse = np.full((BH, N), np.nan, np.float32)
    launch = make_flash_v7(D, BQ, BKV, TX, TY, causal, UNROLL=U, OFFSET=offset)
    kernel = launch(q, k, v, o, lse, wrap=gpusim.jit)
    ref_o, ref_lse = reference(q, k, v, causal, offset)
    assert np.abs(o - ref_o).max() < 1e-5
    np.testing.assert_array_equal(np.isinf(lse), np.isinf(ref_lse))  # offset -1: row 0 sees no key
    seen = np.isfinite(ref_lse)
    np.testing.assert_allclose(lse[seen], ref_lse[seen], atol=1e-4)
    nqb, nkt = -(-N // BQ), -(-NK // BKV)
    tiles = [min(-(-((qb + 1) * BQ + offset) // BKV), nkt) if causal else nkt for qb in range(nqb)]
    assert kernel.report.barriers == BH * sum(1 + t for t in tiles)
