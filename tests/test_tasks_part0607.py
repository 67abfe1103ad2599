"""Fast checks of the part 6 and 7 checkers on plain functions and NumPy stand-ins for the kernels: the inputs
break the shortcuts they are built against, the online softmax's x is read only in chunks, memory growth and
local arrays are judged as the messages say (the kernels are covered by test_exercises)."""

import math
import os

os.environ.setdefault("COURSE_MODE", "cpu")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import utils  # noqa: E402, F401  (picks the simulator before numba is imported)
from course.tasks import part06, part07, profiles  # noqa: E402
from course.tasks.common import CheckFailed  # noqa: E402

cuda = utils.cuda


def online_softmax(x, chunk):
    m, total = np.float32(-np.inf), np.float32(0.0)
    for start in range(0, len(x), chunk):
        block = x[start:start + chunk]
        m_new = max(m, block.max())
        total = total * np.exp(m - m_new) + np.exp(block - m_new).sum()
        m = m_new
    y = np.empty_like(x)
    for start in range(0, len(x), chunk):
        y[start:start + chunk] = np.exp(x[start:start + chunk] - m) / total
    return y


def softmax32(x, m):
    """What a kernel computes from a float32 row and the "maximum" m it subtracted."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x.astype(np.float32) - np.float32(m))
        return e / e.sum(dtype=np.float32)


# ------------------------------------------------------------------------------------------ online softmax

def test_online_softmax_accepts_a_correct_function_element_by_element_too(capsys):
    def one_at_a_time(x, chunk):
        m, total = np.float32(-np.inf), np.float32(0.0)
        for value in x:
            m_new = max(m, value)
            total = total * np.exp(m - m_new) + np.exp(value - m_new)
            m = m_new
        y = np.zeros_like(x)
        for i in range(len(x)):
            y[i] = np.exp(x[i] - m) / total
        return y

    part06.check_online_softmax(online_softmax)
    part06.check_online_softmax(one_at_a_time, seeds=(5, 6, 7, 8, 9))
    assert capsys.readouterr().out.count("✓ online_softmax") == 2


@pytest.mark.parametrize("wrong, text", [
    (lambda x, chunk: np.exp(x) / np.exp(x).sum(), "np.exp(x) uses all of x at once"),
    (lambda x, chunk: np.asarray(x), "turning x into an array"),
    (lambda x, chunk: x.max(), "x.max uses all of x at once"),
    (lambda x, chunk: None, "did you forget `return`"),
    (lambda x, chunk: online_softmax(x, chunk)[:-1], "shape"),
])
def test_online_softmax_explains_wrong_functions(wrong, text):
    with pytest.raises(CheckFailed, match=text.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        part06.check_online_softmax(wrong)


def test_online_softmax_counts_the_passes():
    def three_passes(x, chunk):
        m = max(x[s:s + chunk].max() for s in range(0, len(x), chunk))
        total = sum(np.exp(x[s:s + chunk] - m).sum() for s in range(0, len(x), chunk))
        return np.concatenate([np.exp(x[s:s + chunk] - m) / total for s in range(0, len(x), chunk)])

    def keeps_chunks(x, chunk):
        whole = np.concatenate([x[s:s + chunk] for s in range(0, len(x), chunk)])
        e = np.exp(whole - whole.max())
        return e / e.sum()

    with pytest.raises(CheckFailed, match="3 times over"):
        part06.check_online_softmax(three_passes)
    with pytest.raises(CheckFailed, match="once at most"):
        part06.check_online_softmax(keeps_chunks)


def test_chunked_vector_hands_out_copies_and_counts_reads():
    data = np.arange(10, dtype=np.float32)
    x = part06.ChunkedReader(data, 4)
    block = x[2:6]
    block[0] = -1.0
    assert data[2] == 2.0 and block.base is None
    assert (len(x), x.shape, x.dtype, x[9]) == (10, (10,), np.float32, 9.0)
    assert np.empty_like(x).shape == (10,)
    assert x.reads == [4, 1]
    with pytest.raises(part06.ChunkReadError, match=r"x\[0:5\] reads 5 elements at once"):
        x[0:5]
    for action in (lambda: x - 1.0, lambda: np.float32(1) - x, lambda: np.sum(x), lambda: x.sum()):
        with pytest.raises(part06.ChunkReadError):
            action()


@pytest.mark.parametrize("shortcut", ["no max", "max starts at 0", "max of the first chunk",
                                      "max of the last chunk"])
def test_online_inputs_break_every_shortcut(shortcut):
    broken = 0
    for case in part06.ONLINE_SOFTMAX.cases:
        x, chunk = part06._online_args(case)["x"], case.params["chunk"]
        m = {"no max": 0.0, "max starts at 0": max(0.0, float(x.max())),
             "max of the first chunk": x[:chunk].max(),
             "max of the last chunk": x[(len(x) - 1) // chunk * chunk:].max()}[shortcut]
        broken += not np.isfinite(softmax32(x, m)).all()
    assert broken >= 2, f"only {broken} visible cases break a softmax whose max is '{shortcut}'"


def test_online_families_all_appear_in_the_visible_and_the_hidden_cases():
    for task in (part06.ONLINE_SOFTMAX, part06.ONLINE_SOFTMAX.with_seeds((15, 16, 17, 18, 19))):
        families = {case.seed % len(part06.VECTOR_FAMILIES) for case in task.cases if case.params["n"] > 3}
        assert families == set(range(len(part06.VECTOR_FAMILIES)))


# ------------------------------------------------------------------------------------------ row kernels

@pytest.mark.parametrize("lanes", [part06.ROW_THREADS, part06.WARP])
@pytest.mark.parametrize("shortcut", ["first element", "lane 0's columns", "first block of columns",
                                      "max starts at 0", "no max"])
def test_row_inputs_break_every_shortcut(lanes, shortcut):
    broken = 0
    for case in part06.ROW_SOFTMAX.cases:
        x = part06._rows_args(lanes)(case)["x"]
        for row in x:
            m = {"first element": row[0], "lane 0's columns": row[::lanes].max(),
                 "first block of columns": row[:lanes].max(), "max starts at 0": max(0.0, float(row.max())),
                 "no max": 0.0}[shortcut]
            broken += not np.isfinite(softmax32(row, m)).all()
    assert broken >= 5, f"only {broken} visible rows break a softmax whose max is '{shortcut}'"


def test_late_spikes_sit_in_the_last_column_or_the_last_lanes_columns():
    rng = np.random.default_rng(0)
    assert [part06._late_position(cols, 64, 1, rng) for cols in (257, 64, 127, 128)] == [255, 63, 63, 127]
    assert part06._late_position(257, 64, 0, rng) == 256
    assert all(100 <= part06._late_position(200, 64, 2, rng) < 200 for _ in range(20))


def test_row_sizes_reach_past_every_constant():
    sizes = [(case.params["rows"], case.params["cols"]) for case in part06.ROW_SOFTMAX.cases]
    assert (1, 1) in sizes and any(r > c for r, c in sizes) and max(c for _, c in sizes) > 2 * 1024
    assert any(c % part06.ROW_THREADS and c > part06.ROW_THREADS for _, c in sizes)


def test_row_budgets_allow_a_tree_and_refuse_a_serial_reduction():
    budget = {b.counter: b for b in part06.ROW_CONTRACT.method}["max_thread_accesses"]
    case = part06.ROW_SOFTMAX.cases[0]  # rows=1, cols=1
    _, high = budget.limits(profiles.profile(part06.ROW_SOFTMAX, case), case.params)
    tree = 4 + 2 * (1 + 3 * 6 + 1)  # its column; per reduction: write, 6 steps of 2 reads + 1 write, read
    serial = 4 + 2 * (1 + part06.ROW_THREADS + 1)
    assert tree <= high < serial


@pytest.mark.parametrize("task", [part06.ONLINE_SOFTMAX, part06.ROW_SOFTMAX, part06.WARP_ROW_SOFTMAX],
                         ids=lambda task: task.name)
def test_every_check_meets_rows_below_minus_1e4_and_a_max_starting_there_fails(task):
    deep = 0
    for case in task.cases:
        x = np.atleast_2d(task.make_args(case)["x"])
        for row in x:
            if row.max() < -1.1e4:
                deep += 1
                assert not np.isfinite(softmax32(row, -1e4)).all(), "a max that starts at -1e4 must fail"
    assert deep >= 2, f"only {deep} visible rows lie below -1e4"


def test_the_state_probe_counts_what_is_kept_between_chunks_and_refuses_float64():
    def per_chunk(x, chunk):  # the maxima and sums of every chunk, combined at the end
        maxima, sums = [], []
        for start in range(0, len(x), chunk):
            block = x[start:start + chunk]
            maxima.append(block.max())
            sums.append(np.exp(block - maxima[-1]).sum())
        m = max(maxima)
        total = sum(s * np.exp(mi - m) for mi, s in zip(maxima, sums, strict=True))
        y = np.empty_like(x)
        for start in range(0, len(x), chunk):
            y[start:start + chunk] = np.exp(x[start:start + chunk] - m) / total
        return y

    assert part06._kept_state(online_softmax) is None
    message = part06._kept_state(per_chunk)
    assert "held 518 numbers" in message and "`maxima` 256, `sums` 256" in message
    with pytest.raises(CheckFailed, match="held 518 numbers"):
        part06.check_online_softmax(per_chunk)
    wide = part06._kept_state(lambda x, chunk: online_softmax(x, chunk).astype(np.float64))
    assert "the returned `y` (float64)" in wide
    probe = part06.StateProbe()
    probe.run(lambda x: [x[0], np.float64(1.0)], part06.ChunkedReader(np.zeros(3, np.float32), 1))
    assert probe.float64 == {}  # nothing float64 was held at the read itself


# ------------------------------------------------------------------------------------------ attention inputs

def attention32(q, k, v, causal, max_rule):
    """Float32 attention of one head whose row "maximum" is max_rule(scores, visible) (NaN-prone)."""
    n = q.shape[0]
    s = (q.astype(np.float32) * np.float32(1 / math.sqrt(q.shape[1]))) @ k.T.astype(np.float32)
    visible = np.tril(np.ones((n, n), bool)) if causal else np.ones((n, n), bool)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        m = max_rule(s, visible)[:, None]
        p = np.where(visible, np.exp(s - m), 0)
        return p @ v / p.sum(1, keepdims=True)


@pytest.mark.parametrize("causal, rule", [
    (causal, rule) for causal in (False, True)
    for rule in ("starts at 0", "first key", "first tile", "last tile")
] + [(True, "over masked keys")])
def test_attention_inputs_break_every_shortcut(causal, rule):
    rules = {
        "starts at 0": lambda s, vis: np.maximum(0, np.where(vis, s, -np.inf).max(1)),
        "first key": lambda s, vis: s[:, 0],
        "first tile": lambda s, vis: np.where(vis, s, -np.inf)[:, :part07.TILE].max(1),
        "last tile": lambda s, vis: np.array([np.where(vis[i], s[i], -np.inf)[:i + 1 if causal else None]
                                              [-part07.TILE:].max() for i in range(len(s))]),
        "over masked keys": lambda s, vis: s[:, :((np.arange(len(s)) // part07.TILE + 1) * part07.TILE).max()]
        .max(1),
    }
    task = part07.FLASH_CAUSAL if causal else part07.FLASH_KERNEL
    broken = 0
    for case in task.cases:
        args = task.make_args(case)
        for h in range(case.params["heads"]):
            o = attention32(args["q"][h], args["k"][h], args["v"][h], causal, rules[rule])
            broken += not np.isfinite(o).all()
    assert broken >= 2, f"only {broken} visible heads break attention whose max is '{rule}'"


@pytest.mark.parametrize("task", [part07.FLASH_KERNEL, part07.FLASH_CAUSAL, part07.FLASH_NUMPY],
                         ids=lambda task: task.name)
def test_masked_keys_filled_with_minus_1e4_fail_on_the_deep_family(task):
    """A causal mask that fills -1e4 instead of -inf (or a max that starts at -1e4) lets the masked keys,
    or the fill, outweigh rows whose visible scores lie below -1e4: the visible cases hold such rows."""
    causal = task is part07.FLASH_CAUSAL

    def filled(s, visible):  # masked keys at -1e4 (causal), or a running max that starts at -1e4
        return np.where(visible, s, -1e4).max(1) if causal else np.maximum(-1e4, s.max(1))

    wrong = 0
    for case in (case for case in task.cases if case.inputs == "deep"):
        args = task.make_args(case)
        q, k, v = (np.atleast_3d(args[name]).reshape(-1, case.params["n"], args[name].shape[-1])
                   for name in ("q", "k", "v"))
        for h in range(q.shape[0]):
            s = (q[h].astype(np.float64) @ k[h].T.astype(np.float64)) / math.sqrt(q.shape[-1])
            assert s.max() < -1.1e4
            expected = attention32(q[h], k[h], v[h], causal, lambda s, vis: np.where(vis, s, -np.inf).max(1))
            got = attention32(q[h], k[h], v[h], causal, filled)
            wrong += not np.allclose(got, expected, rtol=1e-4, atol=1e-5)
    assert wrong >= 1


def test_attention_families_shape_the_scores_as_documented():
    q, k, v = part07.attention_inputs(21, 8, 3, 1)
    s = (q.astype(np.float64) @ k.T.astype(np.float64)) / math.sqrt(8)
    argmax = s.argmax(1)
    assert (argmax == 20).sum() >= 3 and (argmax == 0).any()  # rising, deep, spike; falling
    assert (s.max(1) < -200).any() and (np.ptp(s, 1) < 1e-3).any()  # deep; constant


# ------------------------------------------------------------------------------------------ memory

def test_flash_numpy_memory_is_judged_by_its_growth():
    per_row = part07.memory_per_row_budget(part07.MEMORY_D)
    n1, n2 = part07.MEMORY_SIZES
    linear = [{"peak": 10_000 + per_row * n, "error": None} for n in (n1, n2)]
    row_block = [{"peak": 4 * part07.MEMORY_TILES[0] * n, "error": None} for n in (n1, n2)]
    assert part07._judge_memory(linear) is None
    assert "grows by 1024 bytes per query row" in part07._judge_memory(row_block)
    assert "raised ValueError" in part07._judge_memory(
        [{"peak": 0, "error": {"type": "ValueError", "message": "x"}}] * 2)


def test_flash_numpy_rejects_the_full_score_matrix_by_its_reads_and_by_its_growth():
    def full(q, k, v, tile_q, tile_k):  # a learner's own full-score attention
        scores = q @ k.T / np.sqrt(q.shape[-1])
        m = scores.max(axis=-1, keepdims=True)
        e = np.exp(scores - m)
        return (e / e.sum(axis=-1, keepdims=True)) @ v, (m + np.log(e.sum(axis=-1, keepdims=True)))[:, 0]

    with pytest.raises(CheckFailed, match="uses all of k at once"):
        part07.check_flash_attention_numpy(full)
    assert "bytes per query row" in part07._judge_memory([part07._peak_memory(full, n)
                                                          for n in part07.MEMORY_SIZES])


def test_flash_numpy_reads_each_key_row_once_per_query_tile():
    case = part07.FLASH_NUMPY.cases[1]  # n=5, tile_q=2, tile_k=3: 3 query tiles
    once = {"k": [3, 2] * 3, "v": [3, 2] * 3}
    assert part07._judge_kv_reads(case, once) is None
    assert "read 30 rows of k; 3 query tiles" in part07._judge_kv_reads(case, {"k": [3, 2] * 6, "v": []})


def test_kernel_budgets_count_only_tiles_up_to_the_diagonal():
    full = part07._kv_reads({"n": 40}, causal=False)
    causal = part07._kv_reads({"n": 40}, causal=True)
    assert full == 3 * 2 * 40 * part07.HEAD_DIM
    assert causal == 2 * part07.HEAD_DIM * (16 + 32 + 40)


TILE, HEAD_DIM = part07.TILE, part07.HEAD_DIM
N_MAX = 1024


@cuda.jit
def small_locals(o):
    a = cuda.local.array(HEAD_DIM, np.float32)
    b = cuda.local.array((2, TILE), np.float32)
    a[0] = b[0, 0]
    o[0] = a[0]


@cuda.jit
def scores_per_row(o):
    scores = cuda.local.array(N_MAX // 2 + 1, np.float32)
    o[0] = scores[0]


def test_local_arrays_are_read_from_the_source():
    assert [found[3] for found in part07.local_arrays(small_locals)] == [HEAD_DIM, 2 * TILE]
    assert part07.local_memory_message("k", small_locals) is None
    (name, line, text, elements), = part07.local_arrays(scores_per_row)
    assert (name, elements) == ("scores_per_row", 513)
    assert text == "scores = cuda.local.array(N_MAX // 2 + 1, np.float32)"
    assert "hold 513 elements per thread" in part07.local_memory_message("k", scores_per_row)
    assert part07.local_arrays(print) == [] and part07.local_arrays(None) == []
