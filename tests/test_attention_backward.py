"""The FlashAttention backward kernels (course/kernels/attention_backward.py) under gpusim: dQ, dK, dV
against a float64 NumPy reference at small, awkward sizes, with race, barrier and bounds checks on."""

import math

import numpy as np
import pytest

import gpusim
from course.kernels.attention_backward import make_flash_backward, make_flash_backward_v2


def reference(q, k, v, d_o, causal):
    """float64 O, logsumexp and the gradients dQ, dK, dV of softmax(s Q K^T) V for upstream dO."""
    q, k, v, d_o = (x.astype(np.float64) for x in (q, k, v, d_o))
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = scale * q @ k.transpose(0, 2, 1)
    if causal:
        n = q.shape[1]
        s = np.where(np.arange(n)[None, :] > np.arange(n)[:, None], -np.inf, s)
    lse = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
    p = np.exp(s - lse[..., None])
    o = p @ v
    dv = p.transpose(0, 2, 1) @ d_o
    dp = d_o @ v.transpose(0, 2, 1)
    ds = p * (dp - (d_o * o).sum(-1, keepdims=True))
    return o, lse, scale * ds @ k, scale * ds.transpose(0, 2, 1) @ q, dv


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("factory,BH,N,D,BQ,BKV", [
    (make_flash_backward, 2, 37, 16, 16, 8), (make_flash_backward, 1, 50, 8, 8, 16),
    (make_flash_backward_v2, 2, 37, 16, 16, 16), (make_flash_backward_v2, 1, 50, 8, 16, 16),
], ids=["v1-a", "v1-b", "v2-a", "v2-b"])
def test_backward_matches_float64_and_is_race_free(factory, BH, N, D, BQ, BKV, causal):
    rng = np.random.default_rng(N + causal)
    q, k, v, d_o = (rng.standard_normal((BH, N, D)).astype(np.float32) for _ in range(4))
    o, lse, *expected = reference(q, k, v, d_o, causal)
    grads = [np.full((BH, N, D), np.nan, np.float32) for _ in range(3)]
    delta = np.full((BH, N), np.nan, np.float32)
    launch = factory(D, BQ, BKV, causal)
    dq_kernel, dkdv_kernel = launch(q, k, v, o.astype(np.float32), d_o, lse.astype(np.float32), *grads, delta,
                                    wrap=gpusim.jit)
    np.testing.assert_allclose(delta, (d_o.astype(np.float64) * o).sum(-1), rtol=1e-5, atol=1e-5)
    for name, ours, exact in zip(("dQ", "dK", "dV"), grads, expected, strict=True):
        error = np.linalg.norm(ours - exact) / np.linalg.norm(exact)
        assert error < 1e-5, f"{name}: relative error {error:.1e}"
    tiles_q, tiles_k = -(-N // BQ), -(-N // BKV)
    assert dq_kernel.report.blocks == tiles_q * BH and dkdv_kernel.report.blocks == tiles_k * BH
    if not causal:  # two barriers per tile visited: every block visits every tile of the other kind
        assert dq_kernel.report.barriers == dkdv_kernel.report.barriers == 2 * BH * tiles_q * tiles_k
