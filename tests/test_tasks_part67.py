"""Fast checks of the part 6 and 7 checkers on plain functions (the kernels are covered by test_exercises)."""

import numpy as np
import pytest

from gpusim.tasks import part06, part07
from gpusim.tasks.common import CheckFailed


def stable_softmax_in_chunks(x, chunk):
    m, total = np.float32(-np.inf), np.float32(0.0)
    for start in range(0, len(x), chunk):
        block = x[start:start + chunk]
        m_new = max(m, block.max())
        total = total * np.exp(m - m_new) + np.exp(block - m_new).sum()
        m = m_new
    return np.exp(x - m) / total


def test_online_softmax_accepts_a_correct_function(capsys):
    part06.check_online_softmax(stable_softmax_in_chunks)
    assert "✓ online_softmax" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, text", [
    (lambda x, chunk: np.exp(x) / np.exp(x).sum(), "produced NaN or infinity"),
    (lambda x, chunk: None, "did you forget `return`"),
    (lambda x, chunk: stable_softmax_in_chunks(x, chunk)[:-1], "shape"),
])
def test_online_softmax_explains_wrong_functions(wrong, text):
    with pytest.raises(CheckFailed, match=text):
        part06.check_online_softmax(wrong)


def test_flash_numpy_rejects_the_full_score_matrix():
    def full(q, k, v, tile_q, tile_k):
        o, lse = part07.attention64(q, k, v)
        return o, lse

    with pytest.raises(CheckFailed, match="allocated"):
        part07.check_flash_attention_numpy(full)


def test_kernel_budgets_count_only_tiles_up_to_the_diagonal():
    full = part07._kv_reads({"n": 40}, causal=False)
    causal = part07._kv_reads({"n": 40}, causal=True)
    assert full == 3 * 2 * 40 * part07.HEAD_DIM
    assert causal == 2 * part07.HEAD_DIM * (16 + 32 + 40)
