"""Checks for exercise notebook 03 (Numba CUDA): a privatised histogram with atomics, a warp-shuffle
reduction, and a dot product with dynamic shared memory and a learner-chosen launch."""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, Output, Task, check, make_cases

BINS = 16  # histogram bins
HIST_THREADS = 64  # threads per block for the histogram
WARP = 32
WARP_BLOCK = 64  # two warps per block for warp_sum
DOT_THREADS = (32, 64, 128)  # block sizes the dot product is launched with, one per case in turn

SIZES = (1, 7, 31, 33, 64, 100, 257, 1000)


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _random(n: int, seed: int, salt: int) -> np.ndarray:
    return np.random.default_rng([seed, salt]).uniform(-1.0, 1.0, size=n).astype(np.float32)


# -------------------------------------------------------------------------------------------- histogram

def _histogram_args(case: Case) -> dict:
    rng = np.random.default_rng([case.seed, 1])
    # skewed values, so that many threads of a block hit the same bin at once
    values = np.minimum(rng.geometric(0.25, size=case.params["n"]) - 1, BINS - 1).astype(np.int32)
    return {"values": values, "counts": np.empty(BINS, np.int32)}


def _hist_budget(p: dict) -> int:
    return BINS * _cdiv(p["n"], HIST_THREADS)


HISTOGRAM = Task(
    name="histogram",
    cases=make_cases([{"n": n} for n in SIZES]),
    make_args=_histogram_args,
    outputs=(Output("counts", fill=None),),
    reference=lambda case, args: {"counts": np.bincount(args["values"], minlength=BINS)},
    configure=lambda case: (_cdiv(case.params["n"], HIST_THREADS), HIST_THREADS),
    exact=True,
    budgets=(
        Budget("global_atomics", _hist_budget, "atomic adds to global memory",
               f"at most one per bin per block: {BINS} × the number of blocks",
               "Count into a shared-memory histogram first (privatisation), then add each of its bins to "
               "counts once per block."),
    ),
    summary=f"at most {BINS} global updates per block",
    hint="counts[v] is how many times v occurs in values. Every update of a counter that other threads "
         "also update must be cuda.atomic.add.",
    unwritten_hint="",
    error_hints={
        "RaceError": "Several threads update the same counter: use cuda.atomic.add(array, index, 1), and "
                     "separate zeroing, counting and flushing with cuda.syncthreads().",
        "UninitializedReadError": "The shared histogram starts with garbage: zero it (one bin per "
                                  "thread), then cuda.syncthreads() before counting.",
        "BarrierError": "Every thread must reach each cuda.syncthreads(): keep barriers outside `if` blocks.",
    },
)


def check_histogram(kernel, seeds=None) -> None:
    """Check cell of the histogram exercise (the check sets counts to 0 before each launch)."""
    check(HISTOGRAM.with_seeds(seeds) if seeds else HISTOGRAM, {"kernel": kernel})


# --------------------------------------------------------------------------------------------- warp_sum

def _warp_sum_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": _random(n, case.seed, 2), "sums": np.empty(_cdiv(n, WARP), np.float32)}


def _warp_sum_reference(case: Case, args: dict) -> dict:
    a = args["a"].astype(np.float64)
    padded = np.zeros(_cdiv(a.size, WARP) * WARP)
    padded[: a.size] = a
    return {"sums": padded.reshape(-1, WARP).sum(axis=1)}


WARP_SUM = Task(
    name="warp_sum",
    cases=make_cases([{"n": n} for n in SIZES]),
    make_args=_warp_sum_args,
    outputs=(Output("sums"),),
    reference=_warp_sum_reference,
    configure=lambda case: (_cdiv(case.params["n"], WARP_BLOCK), WARP_BLOCK),
    rtol=1e-5,
    atol=1e-5,
    budgets=(
        Budget("shared_loads", lambda p: 0, "shared-memory reads", "none: lanes exchange values by shuffles",
               "Use cuda.shfl_down_sync(0xFFFFFFFF, value, offset) instead of shared memory."),
        Budget("shared_stores", lambda p: 0, "shared-memory writes",
               "none: lanes exchange values by shuffles",
               "Use cuda.shfl_down_sync(0xFFFFFFFF, value, offset) instead of shared memory."),
        Budget("global_loads", lambda p: p["n"], "global reads", "1 per element", "Read a[i] once."),
        Budget("global_stores", lambda p: _cdiv(p["n"], WARP), "global writes", "1 per warp",
               "Only lane 0 of each warp writes."),
    ),
    summary="1 global read per element, 1 write per warp, no shared memory",
    hint="sums[w] is the sum of a[32*w : 32*w + 32] (missing elements count as 0). Halve the shuffle offset "
         "from 16 down to 1: after the step with offset 1, lane 0 holds the warp's total.",
    unwritten_hint="Lane 0 of every warp must write: the lane is cuda.laneid (threadIdx.x % 32), not "
                   "threadIdx.x, and the warp's index in the whole grid is i // 32.",
    error_hints={"OutOfBoundsError": "Lanes past the end of a must not read it (use 0 instead), and "
                                     "warps with no element must not write sums."},
)


def check_warp_sum(kernel, seeds=None) -> None:
    """Check cell of the warp-shuffle reduction exercise."""
    check(WARP_SUM.with_seeds(seeds) if seeds else WARP_SUM, {"kernel": kernel})


# -------------------------------------------------------------------------------------------------- dot

def _dot_threads(case: Case) -> int:
    return case.params["threads"]


def _dot_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": _random(n, case.seed, 3), "b": _random(n, case.seed, 4), "out": np.empty(1, np.float32)}


def _dot_launch_rule(case: Case, launches: list) -> str | None:
    threads = _dot_threads(case)
    for _grid, block, _shared in launches:
        if block != [threads, 1, 1]:
            return (f"it used blocks of {'×'.join(map(str, block))} threads; the exercise asks for blocks of "
                    f"`threads` = {threads} threads (1-D).")
    return None


DOT = Task(
    name="dot",
    cases=make_cases([{"n": n, "threads": DOT_THREADS[i % 3]} for i, n in enumerate(SIZES)]),
    make_args=_dot_args,
    outputs=(Output("out", fill=None),),
    reference=lambda case, args: {"out": np.array([args["a"].astype(np.float64) @ args["b"]])},
    launcher="launch_dot",
    launcher_extras=lambda case: (_dot_threads(case),),
    launch_rule=_dot_launch_rule,
    rtol=1e-4,
    atol=1e-4,
    budgets=(
        Budget("global_stores", lambda p: 0, "plain global writes", "none: out[0] is updated atomically",
               "Add to out[0] with cuda.atomic.add only."),
        Budget("global_loads", lambda p: 2 * p["n"], "global reads", "2 per element: a[i] and b[i]",
               "Each thread reads a[i] and b[i] once; later steps read shared memory."),
        Budget("global_atomics", lambda p: _cdiv(p["n"], p["threads"]), "atomic adds to global memory",
               "1 per block", "Only thread 0 of each block adds the block's total to out[0]."),
    ),
    summary="2 global reads per element and 1 atomic add per block",
    hint="out[0] = sum of a[i] * b[i]. Each block sums its products in shared memory, then thread 0 adds the "
         "block's total with cuda.atomic.add(out, 0, total). Is every element covered by exactly one block?",
    error_hints={
        "ResourceError": "The 4th launch argument is the size of the dynamic shared array in BYTES: "
                         "threads * 4 for float32 (np.dtype(np.float32).itemsize is 4).",
        "OutOfBoundsError": "Threads past the end of a and b must not read them: store 0 instead.",
        "RaceError": "Blocks add to out[0] at the same time: use cuda.atomic.add. Inside a block, "
                     "separate the reduction steps with cuda.syncthreads().",
    },
)


def check_dot(kernel, launcher, seeds=None) -> None:
    """Check cell of the dot-product exercise: the kernel with the learner's launch function."""
    check(DOT.with_seeds(seeds) if seeds else DOT, {"kernel": kernel, "launch": launcher})


TASKS = (HISTOGRAM, WARP_SUM, DOT)
