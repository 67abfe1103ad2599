"""Checks for exercise notebook 07 (FlashAttention): the tiled forward pass in NumPy (output and logsumexp,
never an N×N array), then a Numba kernel with K/V tiles in shared memory, non-causal and causal.

Kernel layout: q, k, v and o are (heads, N, HEAD_DIM) float32 arrays, lse is (heads, N); the grid is
(cdiv(N, TILE), heads) and a block has TILE threads, one per query row. The kernel receives only these O(N)
buffers, so it cannot store the N×N score matrix; the budgets on gpusim's counters check that K and V are read
once per query tile (and, when causal, only up to the diagonal).
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np

from .common import Budget, Case, CheckFailed, Output, Task, _error, check, check_function, judge, make_cases

HEAD_DIM = 8  # d of the kernel tasks (a compile-time constant of the kernel)
TILE = 16  # query rows per block = key rows per shared-memory tile = threads per block
MEMORY_N = 1024  # sequence length of the "no N×N array" check of the NumPy task
MEMORY_D = 16


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


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


def attention_inputs(shape: tuple[int, ...], seed: int, salt: int, loud: float) -> tuple[np.ndarray, ...]:
    """Random float32 q, k, v; q is multiplied by `loud`, so scores reach tens or hundreds (exp would overflow
    in float32 without the running max), and the first query rows get the largest scores late in the keys,
    so the running max changes often."""
    rng = np.random.default_rng([seed, salt])
    q, k, v = (rng.uniform(-1.0, 1.0, size=shape) for _ in range(3))
    k[..., -1, :] *= 3.0  # the last key stands out: a max that arrives late
    return (q * loud).astype(np.float32), k.astype(np.float32), v.astype(np.float32)


# ---------------------------------------------------------------------------------------- NumPy forward

def _numpy_args(case: Case) -> dict:
    p = case.params
    loud = (1.0, 40.0, 3000.0)[case.seed % 3]
    q, k, v = attention_inputs((p["n"], p["d"]), case.seed, 1, loud)
    for a in (q, k, v):
        a.flags.writeable = False
    return {"q": q, "k": k, "v": v, "tile_q": p["tile_q"], "tile_k": p["tile_k"]}


def _numpy_reference(case: Case, args: dict) -> dict:
    o, lse = attention64(args["q"], args["k"], args["v"])
    return {"o": o, "lse": lse}


FLASH_NUMPY = Task(
    name="flash_attention_numpy",
    cases=make_cases([{"n": n, "d": d, "tile_q": tq, "tile_k": tk} for n, d, tq, tk in
                      ((1, 4, 4, 4), (5, 8, 2, 3), (16, 8, 4, 4), (37, 16, 8, 5), (64, 8, 16, 32),
                       (100, 4, 32, 7), (33, 8, 64, 64))]),
    make_args=_numpy_args,
    outputs=(Output("o", fill=None), Output("lse", fill=None)),
    reference=_numpy_reference,
    configure=lambda case: None,  # no launch: a plain function
    rtol=1e-4,
    atol=1e-5,
    summary="O and logsumexp equal float64 attention within rtol 1e-4, scores up to thousands, "
            f"and no N×N array (checked at N={MEMORY_N})",
    hint="For each query tile keep m (running row max), l (running row sum) and acc (unnormalised output). "
         "For each key tile: s = scale·q_tile @ k_tileᵀ; m_new = max(m, s.max(axis=1)); "
         "alpha = exp(m - m_new); p = exp(s - m_new[:, None]); l = alpha·l + p.sum(axis=1); "
         "acc = alpha[:, None]·acc + p @ v_tile. "
         "At the end o = acc / l[:, None] and lse = m + log(l). The last tiles may be partial.",
)


def _peak_memory(function, n: int, d: int, tile: int) -> dict:
    """Untrusted half of the memory check: the peak of NumPy allocations while the learner's function runs."""
    q, k, v = attention_inputs((n, d), 0, 9, 1.0)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        function(q, k, v, tile, tile)
        _, peak = tracemalloc.get_traced_memory()
        return {"peak": int(peak), "error": None}
    except Exception as exc:  # noqa: BLE001
        return {"peak": 0, "error": _error(exc)}
    finally:
        tracemalloc.stop()


def _judge_memory(result: dict, n: int, d: int, tile: int) -> str | None:
    """Trusted half: an N×N float32 matrix is 4·N² bytes; tiles and O need far less than a quarter of it."""
    if result["error"]:
        error = result["error"]
        return f"flash_attention_numpy raised {error['type']} at N={n}: {error['message']}"
    limit = n * n  # a quarter of one float32 N×N matrix
    if result["peak"] > limit:
        return (f"flash_attention_numpy gives the right values, but at N={n}, d={d} with {tile}×{tile} "
                f"tiles it allocated {result['peak'] / 2**20:.1f} MiB at its peak; one N×N float32 matrix is "
                f"{4 * n * n / 2**20:.0f} MiB and the limit is {limit / 2**20:.2f} MiB.\nHint: never "
                f"build the whole score matrix q @ k.T: only a tile_q × tile_k block of scores at a time, "
                f"plus O(N·d) arrays for the output and O(N) for m, l and lse.")
    return None


def check_flash_attention_numpy(function, seeds=None) -> None:
    """Check cell of the NumPy tiled forward: ``function(q, k, v, tile_q, tile_k)`` returns (o, lse)."""
    task = FLASH_NUMPY.with_seeds(seeds) if seeds else FLASH_NUMPY

    def memory(case, fn):
        if case is not task.cases[-1]:
            return None
        return _judge_memory(_peak_memory(fn, MEMORY_N, MEMORY_D, 64), MEMORY_N, MEMORY_D, 64)

    check_function(task, function, lambda fn, a: fn(a["q"], a["k"], a["v"], a["tile_q"], a["tile_k"]), memory)


# ------------------------------------------------------------------------------------------- kernels

def _kernel_args(case: Case) -> dict:
    heads, n = case.params["heads"], case.params["n"]
    q, k, v = attention_inputs((heads, n, HEAD_DIM), case.seed, 2, 1.0)
    q[heads // 2:] *= 60.0  # the later heads have scores in the hundreds: float32 exp needs the running max
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


def _budgets(causal: bool) -> tuple[Budget, ...]:
    rule = ("each query row once (HEAD_DIM values), and per query tile each key row " +
            ("up to the diagonal tile " if causal else "") + "once from K and once from V")
    hint = ("Load each K/V tile into shared memory once per block (thread t loads key row start + t), then "
            "read it from shared memory.")
    if causal:
        hint += " Tiles wholly above the diagonal (every key after every query of the block) are not loaded."
    return (
        Budget("global_loads", lambda p: p["heads"] * (p["n"] * HEAD_DIM + _kv_reads(p, causal)),
               "global reads", rule, hint),
        Budget("global_stores", lambda p: p["heads"] * p["n"] * (HEAD_DIM + 1), "global writes",
               "one output row (HEAD_DIM values) and one logsumexp per query row",
               "Accumulate the output in a cuda.local.array and write o and lse once, after the last tile."),
    )


KERNEL_HINTS = {
    "RaceError": "Two barriers per K/V tile: one after loading it (nobody reads a half-written tile) and one "
                 "after the last read of it (nobody overwrites a tile that a slower thread still reads).",
    "BarrierError": "Every thread of the block must reach every cuda.syncthreads(), including threads whose "
                    "query row is past the end (row >= N): do not `return` early; guard their reads and "
                    "writes with `if row < n:` instead, and keep them loading K/V rows.",
    "OutOfBoundsError": "N need not be a multiple of TILE: guard the query row (row < n) and the key row of "
                        "the tile load (start + t < n), and stop the key loop at the end of the sequence.",
    "KernelException": "A `math domain error` at math.log(l) means l = 0: a row with no key at all. Every "
                       "row sees at least its own key (in causal attention, in the diagonal tile).",
    "UninitializedReadError": "A thread read a shared (or local) element nobody wrote: in the last, partial "
                              "tile only the first n - start rows are loaded, so only read those.",
}
KERNEL_SIZES = ((1, 1), (2, 5), (2, 16), (1, 17), (2, 33), (1, 50))


def _kernel_task(name: str, causal: bool) -> Task:
    return Task(
        name=name,
        cases=make_cases([{"heads": h, "n": n} for h, n in KERNEL_SIZES]),
        make_args=_kernel_args,
        outputs=(Output("o"), Output("lse")),
        reference=_kernel_reference(causal),
        configure=lambda case: ((_cdiv(case.params["n"], TILE), case.params["heads"]), TILE),
        rtol=1e-4,
        atol=1e-5,
        budgets=_budgets(causal),
        summary=("race-free; K and V read once per query tile" + (" up to the diagonal" if causal else "") +
                 "; o and lse written once per row; no N×N buffer"),
        hint=("Row i of head h: o[h, i] = softmax(scale · q[h, i] · k[h, j] over keys j" +
              (" <= i" if causal else "") + ") @ v[h], lse[h, i] = log of the sum of exp(scale · q·k_j) "
              "(natural log, = m + log(l)). When a score raises the running max m to m_new, multiply l AND "
              "every acc[c] by exp(m - m_new). NaN or inf: a row with no key (l = 0) or exp() overflowing."),
        unwritten_hint="Every query row of every head must be written: grid = (cdiv(N, TILE), heads), row = "
                       "blockIdx.x · TILE + threadIdx.x, head = blockIdx.y.",
        error_hints=KERNEL_HINTS,
    )


FLASH_KERNEL = _kernel_task("flash_attention", causal=False)
FLASH_CAUSAL = _kernel_task("flash_attention_causal", causal=True)


def check_flash_attention(kernel, seeds=None) -> None:
    """Check cell of the non-causal flash kernel."""
    check(FLASH_KERNEL.with_seeds(seeds) if seeds else FLASH_KERNEL, {"kernel": kernel})


def check_flash_attention_causal(kernel, seeds=None) -> None:
    """Check cell of the causal flash kernel."""
    check(FLASH_CAUSAL.with_seeds(seeds) if seeds else FLASH_CAUSAL, {"kernel": kernel})


TASKS = (FLASH_NUMPY, FLASH_KERNEL, FLASH_CAUSAL)
__all__ = ["HEAD_DIM", "TILE", "CheckFailed", "attention64", "attention_inputs", "check_flash_attention",
           "check_flash_attention_causal", "check_flash_attention_numpy", "judge"]
