"""Checks for exercise notebook 07 (FlashAttention): the tiled forward pass in NumPy (output and logsumexp,
never an N×N array), then a Numba kernel with K/V tiles in shared memory, non-causal and causal.

Kernel layout: q, k, v and o are (heads, N, HEAD_DIM) float32 arrays, lse is (heads, N); the grid is
(cdiv(N, TILE), heads) and a block has TILE threads, one per query row. The kernel receives only these O(N)
buffers; module-level arrays are read-only constants (Numba's compiler refuses a write to one), the budgets on
gpusim's counters check that K and V are read once per query tile (and, when causal, only up to the
diagonal), that shared memory holds one K/V tile and no thread does the others' share, and a look at the
kernel's source checks that its ``cuda.local.array`` s do not grow with N. The NumPy task receives k and v as
:class:`~course.tasks.chunks.ChunkedReader` s, readable one key tile at a time and each key row once per query
tile (in classroom grading the grader hands out the tiles and counts them; the inputs and the reference,
:func:`grader_only`, are not in the learner's process there); its memory is checked by how it grows between
two sequence lengths, measured with tracemalloc in the process that runs the learner's function.

The inputs give each query row a family that breaks a shortcut (:func:`attention_inputs`): scores that rise
with the key (the maximum is the last key, or, when causal, the diagonal with every masked key above it),
that fall, that all lie below -200, that spike by 200 at the last key, that are constant (±150, 0), that are
loud (tens to a hundred) or moderate.

Each task has a contract (:mod:`course.tasks.contract`): any sequence length and number of heads (for the
NumPy task any d from 4 and any tiles), drawn past the longest example; the families of
:data:`ATTENTION_FAMILIES`, the shortcuts above, rows whose scores all lie below -1e4 (down to -1e6: a
masked key filled with -1e4 instead of -inf, or a max that starts there, outweighs them) and random q, k, v of
log-uniform magnitudes; float32 storage and arithmetic (the compile gate refuses float64 in a kernel; the
NumPy task's float64 arrays are refused from what it holds at its reads). The kernels' method is every gpusim
counter against the reference solution of ``solutions/07_flash_attention`` on the same case.
"""

from __future__ import annotations

import ast
import math
import tracemalloc

import numpy as np

from .chunks import ChunkedReader, StateProbe, float64_message
from .common import (
    Case,
    CheckFailed,
    Output,
    Task,
    _error,
    check,
    check_function,
    grader_only,
    judge,
    print_hint,
)
from .contract import EXACT, Budgeted, Contract, Family, Size, Slack, Solution, method, no_kernel

HEAD_DIM = 8  # d of the kernel tasks (a compile-time constant of the kernel)
TILE = 16  # query rows per block = key rows per shared-memory tile = threads per block
MEMORY_SIZES = (512, 2048)  # sequence lengths of the NumPy task's memory check
MEMORY_D = 2  # small d and a large query tile: O(N·d) memory grows slowly, a tile_q × N block fast
MEMORY_TILES = (256, 16)  # tile_q, tile_k of the memory check
GAP = 30.0  # score step between keys of a rising or falling row: the top key outweighs the next by e^30
SPIKE = 200.0
DEEP = -230.0
LOCAL_BUDGET = 4 * HEAD_DIM + 2 * TILE  # elements of cuda.local.array per thread


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


@grader_only
def attention64(q, k, v, causal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Reference attention in float64 for (..., N, d) arrays: the output and the logsumexp of each row."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    m = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - m)
    total = e.sum(axis=-1, keepdims=True)
    return (e / total) @ v, (m + np.log(total))[..., 0]


# ------------------------------------------------------------------------------------------------ inputs

ROW_FAMILIES = ("moderate", "loud", "rising", "falling", "deep", "spike", "constant")
_RAMP, _SPIKE_DIM = 0, 1  # key dimensions: k[j, 0] = j, k[j, 1] = 1 for the last key only, k[j, d-1] = 1


@grader_only
def attention_inputs(n: int, d: int, seed: int, salt: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """float32 q, k, v of one head, (n, d) each, d >= 4. The keys carry three fixed dimensions, a ramp
    (k[j, 0] = j), a marker of the last key (k[j, 1]) and a constant 1 (k[j, d-1]); the rest is random.
    Each query row takes one of ROW_FAMILIES (a seeded shuffle: 7 or more rows hold all of them) and uses
    the fixed dimensions to set its scores s_j = q·k_j / sqrt(d):

    * rising: s_j = 30·j, the maximum is the last key (in causal attention the diagonal, every masked key
      scoring more); falling: s_j = -30·j, the maximum is the first key;
    * deep: rising, shifted so that every score lies below -230 (a max that starts at 0 underflows);
    * spike: moderate scores, 200 higher at the last key (a max taken too early overflows);
    * constant: the same score, 150, -150 or 0, for every key; loud: random scores of tens to a hundred;
      moderate: random scores of a few units.

    Scores that are large are far apart (30 between the top two), so float32 rounding in the score does not
    reach the tolerance; scores that are close are small.
    """
    rng = np.random.default_rng([seed, salt, n, d])
    scale = 1.0 / math.sqrt(d)
    bias, free = d - 1, slice(2, d - 1)
    k = np.zeros((n, d))
    k[:, _RAMP] = np.arange(n)
    k[n - 1, _SPIKE_DIM] = 1.0
    k[:, bias] = 1.0
    k[:, free] = rng.uniform(-1.0, 1.0, (n, d - 3))
    q = np.zeros((n, d))
    order = rng.permutation(len(ROW_FAMILIES))
    for i in range(n):
        family = ROW_FAMILIES[order[i % len(order)]]
        if family in ("moderate", "loud", "spike"):
            q[i, free] = rng.uniform(-1.0, 1.0, d - 3) * (60.0 if family == "loud" else 2.0)
        if family == "spike":
            q[i, _SPIKE_DIM] = SPIKE / scale
        elif family in ("rising", "falling", "deep"):
            q[i, _RAMP] = (GAP if family != "falling" else -GAP) / scale
            q[i, bias] = (DEEP - GAP * (n - 1)) / scale if family == "deep" else 0.0
        elif family == "constant":
            q[i, bias] = (150.0, -150.0, 0.0)[int(rng.integers(3))] / scale
    v = rng.uniform(-1.0, 1.0, (n, d))
    return q.astype(np.float32), k.astype(np.float32), v.astype(np.float32)


# The contracts' families: the shortcuts above; "deep", every row's scores below -1e4 (a masked key filled
# with -1e4 instead of -inf, or a maximum that starts there, outweighs every real one); "scaled", random
# q, k and v whose magnitudes are log-uniform over a case (scores from 1e-6 to tens, outputs from 1e-3 to
# 1e3).
DEEP_DEPTHS = (4.05, 6.0)  # exponents of ten: a row's top score lies between -1.12e4 and -1e6
SCALED_QK, SCALED_V = (-3.0, 0.5), (-3.0, 3.0)
ATTENTION_FAMILIES = (
    Family("shortcuts", "each query row one of: scores rising with the key by 30 (the maximum the last "
                        "key, or when causal the diagonal), falling, rising below -230, a spike of 200 at "
                        "the last key, constant (±150, 0), loud (tens to a hundred), moderate"),
    Family("deep", "scores rising with the key by 30, every one below -1e4: each row's top score "
                   "log-uniform from -1.1e4 to -1e6"),
    Family("scaled", "q and k uniform in [-1, 1] times a factor log-uniform from 1e-3 to 3, v times one from "
                     "1e-3 to 1e3"),
)


@grader_only
def family_inputs(family: str, n: int, d: int, seed: int, salt: int):
    """float32 q, k, v of one head of a contract's family (the shortcuts: :func:`attention_inputs`)."""
    if family in ("shortcuts", ""):
        return attention_inputs(n, d, seed, salt)
    rng = np.random.default_rng([seed, salt, n, d, 7])
    if family == "scaled":
        q, k = (rng.uniform(-1.0, 1.0, (n, d)) * 10.0 ** rng.uniform(*SCALED_QK) for _ in range(2))
        v = rng.uniform(-1.0, 1.0, (n, d)) * 10.0 ** rng.uniform(*SCALED_V)
        return q.astype(np.float32), k.astype(np.float32), v.astype(np.float32)
    scale = 1.0 / math.sqrt(d)
    k = np.zeros((n, d))
    k[:, _RAMP], k[:, d - 1] = np.arange(n), 1.0
    q = np.zeros((n, d))
    q[:, _RAMP] = GAP / scale
    q[:, d - 1] = (-(10.0 ** rng.uniform(*DEEP_DEPTHS, n)) - GAP * (n - 1)) / scale
    v = rng.uniform(-1.0, 1.0, (n, d))
    return q.astype(np.float32), k.astype(np.float32), v.astype(np.float32)


# ---------------------------------------------------------------------------------------- NumPy forward

def _numpy_args(case: Case) -> dict:
    p = case.params
    q, k, v = family_inputs(case.inputs, p["n"], p["d"], case.seed, 1)
    for a in (q, k, v):
        a.flags.writeable = False
    return {"q": q, "k": k, "v": v, "tile_q": p["tile_q"], "tile_k": p["tile_k"]}


def _numpy_reference(case: Case, args: dict) -> dict:
    o, lse = attention64(args["q"], args["k"], args["v"])
    return {"o": o, "lse": lse}


def _judge_kv_reads(case: Case, reads: dict[str, list[int]]) -> str | None:
    """Trusted half of the method check: every query tile reads each key row of K and V once, no more (a
    pass of its own for the maximum) and no less (a copy of K or V gathered once, kept across query tiles)."""
    p = case.params
    tiles = _cdiv(p["n"], p["tile_q"])
    limit = tiles * p["n"] + p["tile_k"]
    for name, rows in reads.items():
        if sum(rows) < tiles * p["n"]:
            return (f"flash_attention_numpy gives the right values for {case.label()}, but it read only "
                    f"{sum(rows)} rows of {name}; {tiles} query tiles of N = {p['n']} keys read "
                    f"{tiles * p['n']} when each query tile streams every key tile itself (the outer loop "
                    f"over query tiles, the inner loop over key tiles).\nHint: do not gather {name} into a "
                    f"whole array once and keep it (that is ordinary attention, row by row): for each query "
                    f"tile, read the key tiles {name}[k0:k0 + tile_k] one after another inside the loop and "
                    f"fold each into m, l and acc with the online update.")
        if sum(rows) > limit:
            return (f"flash_attention_numpy gives the right values for {case.label()}, but it read "
                    f"{sum(rows)} rows of {name}; {tiles} query tile{'s' if tiles > 1 else ''} of N = "
                    f"{p['n']} keys need {tiles * p['n']} (each query tile reads every key row once).\nHint: "
                    f"find the "
                    f"running maximum and the sums in the same pass over the key tiles (the online softmax: "
                    f"rescale l and acc by exp(m - m_new) when the maximum grows), not in a pass of its own.")
    return None


# (n, d, tile_q, tile_k): n = 1, tiles of 1, tiles that do not divide n, tile_q != tile_k, tiles longer than
# the sequence, d the largest dimension, n past 128; then a deep and a scaled case. Drawn: n up to
# NUMPY_DRAWN_N (past the longest example), d from 4 to 32, tiles from 1 to n + 1.
NUMPY_SIZES = ((1, 4, 4, 4), (5, 8, 2, 3), (16, 8, 4, 4), (37, 16, 8, 5), (64, 8, 16, 32), (100, 4, 32, 7),
               (33, 8, 64, 64), (7, 4, 1, 1), (3, 16, 2, 2), (131, 8, 16, 13))
NUMPY_HIDDEN_SIZES = ((200, 8, 64, 16), (2, 4, 1, 2), (97, 16, 13, 11), (50, 4, 50, 1), (17, 8, 16, 16))
NUMPY_FAMILY_SIZES = (((20, 8, 8, 4), "deep"), ((40, 8, 16, 8), "scaled"))
NUMPY_HIDDEN_FAMILY_SIZES = (((45, 4, 7, 16), "deep"), ((9, 16, 4, 3), "scaled"))
NUMPY_DRAWN_N, NUMPY_DRAWN_D = 140, 32
NOTEBOOK = "07_flash_attention"


def _numpy_examples(sizes, family_sizes) -> tuple[dict, ...]:
    keys = ("n", "d", "tile_q", "tile_k")
    return (tuple({**dict(zip(keys, size, strict=True)), "inputs": "shortcuts"} for size in sizes)
            + tuple({**dict(zip(keys, size, strict=True)), "inputs": family}
                    for size, family in family_sizes))


NUMPY_CONTRACT = Contract(
    name="part07.flash_attention_numpy",
    sizes=(Size("n", 1, None, NUMPY_DRAWN_N, "the sequence length"),
           Size("d", 4, None, NUMPY_DRAWN_D, "the head dimension (4 or more: the inputs shape scores with "
                                             "three of its dimensions)"),
           Size("tile_q", 1, None, lambda p: p["n"] + 1, "query rows per tile: any, the sequence's length "
                                                         "or more too"),
           Size("tile_k", 1, None, lambda p: p["n"] + 1, "key rows per tile: any")),
    inputs=ATTENTION_FAMILIES,
    method=no_kernel("a plain-Python function, no kernel: the check counts the key rows it reads, and "
                     "measures how its memory grows and whether it holds float64 arrays"),
    solution=Solution(NOTEBOOK, (("function", "flash_attention_numpy"),)),
    examples=_numpy_examples(NUMPY_SIZES, NUMPY_FAMILY_SIZES),
    hidden_examples=_numpy_examples(NUMPY_HIDDEN_SIZES, NUMPY_HIDDEN_FAMILY_SIZES),
    drawn=3,
)
FLASH_NUMPY = Task(
    name="flash_attention_numpy",
    cases=NUMPY_CONTRACT.cases(),
    contract=NUMPY_CONTRACT,
    make_args=_numpy_args,
    outputs=(Output("o", fill=None), Output("lse", fill=None)),
    reference=_numpy_reference,
    configure=lambda case: None,  # no launch: a plain function
    rtol=1e-4,
    atol=1e-5,
    summary="O and logsumexp equal float64 attention within rtol 1e-4 on scores built to overflow or "
            f"underflow exp and scores below -1e4, in float32, and memory that grows as O(N·d) (N = "
            f"{MEMORY_SIZES[0]} and {MEMORY_SIZES[1]})",
    hint="For each query tile keep m (running row max, starting at -inf, not 0 or -1e4), l (running row "
         "sum) and acc (unnormalised output), all float32, and fold each key tile into them. NaN or inf: a "
         "max that is not the true running max of every key seen (exp overflows above 88.7 and underflows "
         "below -103).",
    more_hints=("For each key tile: s = scale·q_tile @ k_tileᵀ; m_new = max(m, s.max(axis=1)); alpha = "
                "exp(m - m_new); p = exp(s - m_new[:, None]); l = alpha·l + p.sum(axis=1); acc = "
                "alpha[:, None]·acc + p @ v_tile. At the end o = acc / l[:, None] and lse = m + log(l). The "
                "last tiles may be partial.",),
    error_hints={"ChunkReadError": "k and v can only be read one key tile at a time, k[k0:k0 + tile_k] and "
                                   "v[k0:k0 + tile_k], inside the loop over key tiles: the scores of a "
                                   "query tile against every key at once (q_tile @ k.T) are the block "
                                   "FlashAttention never builds."},
    chunked=(("k", "tile_k"), ("v", "tile_k")),
    reads_rule=_judge_kv_reads,
)


def _peak_memory(function, n: int) -> dict:
    """Untrusted half of the memory check: the peak of NumPy allocations while the learner's function runs on
    a sequence of n (d = MEMORY_D, MEMORY_TILES)."""
    rng = np.random.default_rng([n, 7])
    q, k, v = (rng.uniform(-1.0, 1.0, (n, MEMORY_D)).astype(np.float32) for _ in range(3))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        function(q, k, v, *MEMORY_TILES)
        _, peak = tracemalloc.get_traced_memory()
        return {"peak": int(peak), "error": None}
    except Exception as exc:  # noqa: BLE001
        return {"peak": 0, "error": _error(exc)}
    finally:
        tracemalloc.stop()


def memory_per_row_budget(d: int) -> int:
    """Bytes per query row that O(N·d) memory may add: 16 float32 values per element of a row of q, k, v or
    o (copies, float64 versions, scaled q, kᵀ, ...) plus 64 bytes for per-row values such as m, l and lse."""
    return 64 * d + 64


def _judge_memory(results: list[dict]) -> str | None:
    """Trusted half: memory must grow like N·d, not like N·tile_q or N²: compare the peaks at two sizes."""
    for n, result in zip(MEMORY_SIZES, results, strict=True):
        if result["error"]:
            error = result["error"]
            return f"flash_attention_numpy raised {error['type']} at N={n}: {error['message']}"
    (n1, n2), (p1, p2) = MEMORY_SIZES, (r["peak"] for r in results)
    per_row, limit = (p2 - p1) / (n2 - n1), memory_per_row_budget(MEMORY_D)
    if per_row <= limit:
        return None
    tile_q, tile_k = MEMORY_TILES
    return (f"flash_attention_numpy gives the right values, but its memory grows by {per_row:.0f} bytes per "
            f"query row: {p1 / 2**20:.2f} MiB at its peak for N={n1} and {p2 / 2**20:.2f} MiB for N={n2} "
            f"(d={MEMORY_D}, tile_q={tile_q}, tile_k={tile_k}). Memory that is O(N·d) (q, k, v, o, lse and a "
            f"few copies) grows by at most {limit} bytes per row here; a tile_q × N block of scores grows by "
            f"4·tile_q = {4 * tile_q}, an N × N matrix by 4·N.\nHint: never hold the scores of a query tile "
            f"against every key (q_tile @ k.T), nor keep the score tiles you have used: only one tile_q × "
            f"tile_k block of scores at a time, plus m, l and acc for the query tile.")


PRECISION_CASE = (40, 8, 16, 8)  # n, d, tile_q, tile_k of the float64 check


def _float64_held(function) -> str | None:
    """Untrusted half of the precision check: NumPy float64 arrays or numbers the function holds while it
    reads key tiles, or returns (run where the learner's function runs, like the memory check)."""
    n, d, tile_q, tile_k = PRECISION_CASE
    rng = np.random.default_rng([n, 8])
    q, k, v = (rng.uniform(-1.0, 1.0, (n, d)).astype(np.float32) for _ in range(3))
    probe = StateProbe(given=(q,))
    try:
        o, lse = probe.run(function, q, ChunkedReader(k, tile_k, "k", "tile_k"),
                           ChunkedReader(v, tile_k, "v", "tile_k"), tile_q, tile_k)
    except Exception as exc:  # noqa: BLE001
        return f"flash_attention_numpy raised {type(exc).__name__} at N={n}: {exc}"
    return float64_message("flash_attention_numpy", probe, {"o": o, "lse": lse})


def check_flash_attention_numpy(function, seeds=None) -> None:
    """Check cell of the NumPy tiled forward: ``function(q, k, v, tile_q, tile_k)`` returns (o, lse); k and v
    are :class:`~course.tasks.chunks.ChunkedReader` s that hand out at most tile_k rows at a time."""
    task = FLASH_NUMPY.with_seeds(seeds) if seeds else FLASH_NUMPY

    def memory(case, fn):
        if case is not task.cases[-1]:
            return None
        return _float64_held(fn) or _judge_memory([_peak_memory(fn, n) for n in MEMORY_SIZES])

    check_function(task, function, lambda fn, a: fn(a["q"], a["k"], a["v"], a["tile_q"], a["tile_k"]), memory)


# ------------------------------------------------------------------------------------------- kernels

def _kernel_args(case: Case) -> dict:
    heads, n = case.params["heads"], case.params["n"]
    q, k, v = (np.empty((heads, n, HEAD_DIM), np.float32) for _ in range(3))
    for h in range(heads):
        q[h], k[h], v[h] = family_inputs(case.inputs, n, HEAD_DIM, case.seed, 2 + h)
    return {"q": q, "k": k, "v": v, "o": np.empty((heads, n, HEAD_DIM), np.float32),
            "lse": np.empty((heads, n), np.float32), "scale": np.float32(1.0 / math.sqrt(HEAD_DIM))}


def _kernel_reference(causal: bool):
    def reference(case: Case, args: dict) -> dict:
        o, lse = attention64(args["q"], args["k"], args["v"], causal=causal)
        return {"o": o, "lse": lse}

    return reference


def _kv_reads(p: dict, causal: bool) -> int:
    """Global reads of K and V: each query tile reads every key row it needs once (2·HEAD_DIM values)."""
    n, tiles = p["n"], _cdiv(p["n"], TILE)
    if not causal:
        return tiles * 2 * n * HEAD_DIM
    return sum(2 * HEAD_DIM * min(n, (b + 1) * TILE) for b in range(tiles))


def _thread_accesses(p: dict) -> int:
    """Element accesses one thread needs at most: its query row and output, its share of each tile load, and
    per key up to 3·HEAD_DIM shared reads (the score, computed twice if the tile's max comes first, and V)
    plus 2 for a score kept in shared memory."""
    n = p["n"]
    return HEAD_DIM * (2 + 4 * _cdiv(n, TILE) + 3 * n) + 2 * n + 8


def _shared_bytes(p: dict) -> int:
    return 4 * 2 * TILE * HEAD_DIM


def _kernel_method(causal: bool):
    rule = ("each query row once (HEAD_DIM values), and per query tile each key row " +
            ("up to the diagonal tile " if causal else "") + "once from K and once from V")
    hint = ("Load each K/V tile into shared memory once per block (thread t loads key row start + t), then "
            "read it from shared memory.")
    if causal:
        hint += " Tiles wholly above the diagonal (every key after every query of the block) are not loaded."
    barriers = "two per K/V tile: one after loading it, one before the next load overwrites it"
    barrier_hint = ("One cuda.syncthreads() after loading a tile and one after the last read of it, in the "
                    "loop over tiles" + (" (which stops at the diagonal tile)" if causal else "") +
                    "; none inside the loop over the tile's keys.")
    shared_traffic = "per key, its score (HEAD_DIM reads of K) and its share of the output (HEAD_DIM of V)"
    return method(
        (
            Budgeted("global_loads",
                     lambda p: f"{rule}: {p['heads'] * (p['n'] * HEAD_DIM + _kv_reads(p, causal))} here",
                     hint),
            Budgeted("global_stores", "one output row (HEAD_DIM values) and one logsumexp per query row",
                     "Accumulate the output in a cuda.local.array and write o and lse once, after the last "
                     "tile."),
            Budgeted("static_shared_bytes",
                     f"one K tile and one V tile of TILE × HEAD_DIM float32 ({_shared_bytes({})} bytes), "
                     f"plus at most one TILE × TILE tile of scores: shared memory must not grow with N",
                     "Stage one tile of K and V at a time in cuda.shared.array((TILE, HEAD_DIM), float32) "
                     "and keep each row's m, l and accumulator in registers and local arrays; arrays sized "
                     "for the whole sequence are the N-sized buffers FlashAttention exists to avoid.",
                     most=Slack(extra=lambda r, p: 4 * TILE * TILE, words="a TILE × TILE float32 tile of "
                                                                          "scores"), least=EXACT),
            Budgeted("max_thread_accesses",
                     lambda p: f"its query row and output, its own key row of each tile (thread t loads row "
                               f"start + t), and a few shared reads per key: {_thread_accesses(p)} at most ",
                     "hereOne thread did far more than its share: each thread t of the block loads key row "
                     "start + t of K and of V (TILE threads load the TILE rows of a tile together), then "
                     "every thread computes its own query row.",
                     most=Slack(extra=lambda r, p: max(0, _thread_accesses(p)
                                                       - int(r["max_thread_accesses"])),
                                words="what the task allows")),
            Budgeted("active_threads", "one thread per query row",
                     "Thread t of block (bx, h) handles query row bx·TILE + t of head h.", most=None,
                     least=EXACT),
            Budgeted("max_block_barriers", barriers, barrier_hint),
            Budgeted("barriers", barriers, barrier_hint),
            Budgeted("global_sectors", "coalesced loads: the threads of a block load neighbouring key rows",
                     hint, most=Slack(0.25, lambda r, p: 2, "2")),
            Budgeted("global_requests", "coalesced loads", hint, most=Slack(0.25)),
            Budgeted("shared_loads", shared_traffic, hint, most=Slack(1.0)),
            Budgeted("shared_stores", "each key row of a tile stored once, plus a tile of scores at most",
                     hint, most=Slack(1.0)),
            Budgeted("shared_requests", shared_traffic, hint, most=Slack(1.0)),
            Budgeted("bank_conflicts", "those of storing the K and V tiles row by row, thread t its row",
                     "Thread t stores key row start + t of the tile, k_tile[t, c] for c in "
                     "range(HEAD_DIM); every thread reads the same key at once (k_tile[j, c]), which shared "
                     "memory broadcasts.",
                     most=Slack(0.25)),
        ),
        free={"blocks": "the check launches the kernel itself, (cdiv(N, TILE), heads) blocks",
              "threads": "the check launches the kernel itself, TILE threads a block",
              "dynamic_shared_bytes": "the launch gives none"})


KERNEL_HINTS = {
    "RaceError": "Two barriers per K/V tile: one after loading it (nobody reads a half-written tile) and one "
                 "after the last read of it (nobody overwrites a tile that a slower thread still reads).",
    "WriteConflictError": "Two threads wrote the same element on the same line: thread t of block (bx, h) "
                          "writes query row bx·TILE + t of head h and loads key row start + t of the tile.",
    "BarrierError": "Every thread of the block must reach every cuda.syncthreads(), including threads whose "
                    "query row is past the end (row >= N): do not `return` early; guard their reads and "
                    "writes with `if row < n:` instead, and keep them loading K/V rows.",
    "OutOfBoundsError": "N need not be a multiple of TILE: guard the query row (row < n) and the key row of "
                        "the tile load (start + t < n), and stop the key loop at the end of the sequence. No "
                        "array may be sized for a fixed N: the check uses sequences longer than 64.",
    "UninitializedReadError": "A thread read a shared (or local) element nobody wrote: in the last, partial "
                              "tile only the first n - start rows are loaded, so only read those.",
}
# (heads, n): n = 1, shorter than a tile, one tile, just past tiles, heads the largest dimension, n past 64;
# then a deep and a scaled case. Drawn: n up to KERNEL_DRAWN_N (past the longest example), heads as many
# as keep heads·N·max(N, TILE) within KERNEL_DRAWN_COST (a case's simulated work).
KERNEL_SIZES = ((1, 1), (2, 5), (2, 16), (1, 17), (2, 33), (1, 50), (7, 3), (1, 70))
KERNEL_HIDDEN_SIZES = ((1, 131), (3, 20), (8, 2))
KERNEL_FAMILY_SIZES = (((1, 20), "deep"), ((1, 12), "scaled"))
KERNEL_HIDDEN_FAMILY_SIZES = (((1, 40), "deep"), ((3, 9), "scaled"))
KERNEL_DRAWN_N, KERNEL_DRAWN_COST, KERNEL_DRAWN = 80, 2400, 1


def _kernel_examples(sizes, family_sizes) -> tuple[dict, ...]:
    return (tuple({"heads": h, "n": n, "inputs": "shortcuts"} for h, n in sizes)
            + tuple({"heads": h, "n": n, "inputs": family} for (h, n), family in family_sizes))


def _kernel_cost(p: dict) -> int:
    return p["heads"] * _cdiv(p["n"], TILE) * TILE * max(p["n"], TILE)


def _kernel_task(name: str, causal: bool) -> Task:
    spec = Contract(
        name=f"part07.{name}",
        sizes=(Size("n", 1, None, KERNEL_DRAWN_N, "the sequence length"),
               Size("heads", 1, None,
                    lambda p: max(1, KERNEL_DRAWN_COST // _kernel_cost({"heads": 1, "n": p["n"]})),
                    "heads: the grid's y dimension")),
        inputs=ATTENTION_FAMILIES,
        method=_kernel_method(causal),
        solution=Solution(NOTEBOOK, (("kernel", name),)),
        examples=_kernel_examples(KERNEL_SIZES, KERNEL_FAMILY_SIZES),
        hidden_examples=_kernel_examples(KERNEL_HIDDEN_SIZES, KERNEL_HIDDEN_FAMILY_SIZES),
        drawn=KERNEL_DRAWN,
        block_sizes="none to choose: TILE threads a block, one per query row of the tile",
        cost=_kernel_cost,
    )
    return Task(
        name=name,
        cases=spec.cases(),
        contract=spec,
        make_args=_kernel_args,
        outputs=(Output("o"), Output("lse")),
        reference=_kernel_reference(causal),
        configure=lambda case: ((_cdiv(case.params["n"], TILE), case.params["heads"]), TILE),
        rtol=1e-4,
        atol=1e-5,
        summary=("race-free; K and V read once per query tile" + (" up to the diagonal" if causal else "") +
                 ", one tile in shared memory, each thread its share; o and lse written once per row; no "
                 "N-sized buffer; float32, on scores down to -1e6"),
        hint=("Row i of head h: o[h, i] = softmax(scale · q[h, i] · k[h, j] over keys j" +
              (" <= i" if causal else "") + ") @ v[h], lse[h, i] = log of the sum of exp(scale · q·k_j) "
              "(natural log, = m + log(l)). NaN or inf: a row with no key (l = 0), or a max that is not the "
              "true running max of the keys the row sees (start m at -inf, not 0 or -1e4" +
              ("; masked keys never enter it, nor the sums" if causal else "") + ")."),
        more_hints=("When a score raises the running max m to m_new, multiply l AND every acc[c] by "
                    "exp(m - m_new), then add p = exp(s - m_new) to l and p·v[j, c] to acc[c]. exp "
                    "overflows "
                    "above 88.7 and underflows below -103: only differences from the true running max are "
                    "safe to exponentiate.",),
        unwritten_hint="Every query row of every head must be written: grid = (cdiv(N, TILE), heads), row = "
                       "blockIdx.x · TILE + threadIdx.x, head = blockIdx.y.",
        error_hints=KERNEL_HINTS,
    )


FLASH_KERNEL = _kernel_task("flash_attention", causal=False)
FLASH_CAUSAL = _kernel_task("flash_attention_causal", causal=True)


# ------------------------------------------------------------------------------- local memory per thread

def local_arrays(kernel) -> list[tuple[str, int, str, int]]:
    """(function, line, source line, elements) of each ``cuda.local.array`` in the kernel and the device
    functions it calls, read from its source (:mod:`course.kernelsource`); [] for anything that is not a
    kernel with readable source (the check itself reports those). Shapes are compile-time constants: ints,
    tuples and module-level names of them; a shape it cannot work out is left out."""
    from course import kernelsource

    try:
        spec = kernel if isinstance(kernel, dict) else kernelsource.describe(kernel)
        functions = kernelsource.functions_of(spec).values()
    except Exception:  # noqa: BLE001 (not a kernel, or unreadable: check() reports it)
        return []
    found = []
    for function in functions:
        lines = function["source"].splitlines()
        try:
            tree = ast.parse(function["source"])
        except SyntaxError:
            continue
        names = {**function["globals"], **function["closure"]}
        for node in ast.walk(tree):
            if _is_local_array_call(node) and node.args:
                elements = _constant_elements(node.args[0], names)
                if elements is not None:
                    found.append((function["name"], function["firstline"] + node.lineno - 1,
                                  lines[node.lineno - 1].strip(), elements))
    return found


def _is_local_array_call(node) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Attribute) and func.attr == "array" and isinstance(func.value, ast.Attribute)
            and func.value.attr == "local")


def _constant_elements(node, names: dict) -> int | None:
    """Elements of a shape written as ints, tuples, module-level names and + - * // of those; else None."""
    def value(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name) and n.id in names:
            return _decoded(names[n.id])
        if isinstance(n, ast.Tuple):
            parts = [value(e) for e in n.elts]
            return None if any(p is None for p in parts) else math.prod(parts)
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
            left, right = value(n.left), value(n.right)
            if left is None or right is None or (isinstance(n.op, ast.FloorDiv) and right == 0):
                return None
            return {ast.Add: left + right, ast.Sub: left - right, ast.Mult: left * right,
                    ast.FloorDiv: left // max(right, 1)}[type(n.op)]
        return None

    return value(node)


def _decoded(item: dict) -> int | None:
    tag, data = next(iter(item.items()))
    if tag == "int":
        return data
    if tag == "tuple":
        parts = [_decoded(part) for part in data]
        return None if any(p is None for p in parts) else math.prod(parts)
    return None


def local_memory_message(name: str, kernel) -> str | None:
    """A complaint when the kernel's local arrays hold more than LOCAL_BUDGET elements per thread."""
    arrays = local_arrays(kernel)
    total = sum(elements for *_, elements in arrays)
    if total <= LOCAL_BUDGET:
        return None
    largest = max(arrays, key=lambda a: a[3])
    return (f"{name}: its cuda.local.array s hold {total} elements per thread (the largest, in {largest[0]} "
            f"at line {largest[1]}: `{largest[2]}`, {largest[3]}); the budget is {LOCAL_BUDGET} (a query row "
            f"and an accumulator of HEAD_DIM each, and two tiles of TILE scores). A thread that keeps a "
            f"score for every key holds N of them, N × N over the grid: the matrix FlashAttention never "
            f"stores.\n"
            f"Hint: keep only the running m and l and the accumulator: fold each key's score into them as it "
            f"is computed (the online softmax), tile by tile.")


def _check_kernel(task: Task, kernel, seeds) -> None:
    # Best effort, like every check that runs in the learner's process: the source is read as the learner
    # wrote it; the grader's worker runs this too, before the Task's cases.
    message = local_memory_message(task.name, kernel)
    if message:
        raise CheckFailed(message)
    check(task.with_seeds(seeds) if seeds else task, {"kernel": kernel})


def check_flash_attention(kernel, seeds=None) -> None:
    """Check cell of the non-causal flash kernel."""
    _check_kernel(FLASH_KERNEL, kernel, seeds)


def check_flash_attention_causal(kernel, seeds=None) -> None:
    """Check cell of the causal flash kernel."""
    _check_kernel(FLASH_CAUSAL, kernel, seeds)


def hint(name: str, level: int = 2) -> None:
    """Print hint ``level`` of a task of this notebook (level 1 is the one the check's messages show)."""
    print_hint(TASKS, name, level)


TASKS = (FLASH_NUMPY, FLASH_KERNEL, FLASH_CAUSAL)
__all__ = ["HEAD_DIM", "TILE", "CheckFailed", "attention64", "attention_inputs", "check_flash_attention",
           "check_flash_attention_causal", "check_flash_attention_numpy", "judge"]
