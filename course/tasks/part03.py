"""Checks for exercise notebook 03 (Numba CUDA): a privatised histogram with atomics, a warp-shuffle
reduction, and a dot product with dynamic shared memory and a learner-chosen launch.

Each kernel runs at several block sizes (the kernels never fix their own), and each task states its method as
budgets on gpusim's counters: the histogram's global reads and updates (privatisation), the span of the
busiest thread (no thread loops over a block), no shared memory in warp_sum, and the dot product's dynamic
shared memory (no static array) and one atomic add per block.
"""

from __future__ import annotations

import math

import numpy as np

from .common import Budget, Case, Output, Task, check, make_cases
from .part02 import block_inputs

BINS = 16  # histogram bins
WARP = 32
SPAN = "element accesses (global and shared, atomics included) in its busiest thread"


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _blocks(p: dict) -> int:
    return _cdiv(p["n"], p["threads"])


def _configure(case: Case) -> tuple:
    return (_blocks(case.params), case.params["threads"])


# -------------------------------------------------------------------------------------------- histogram

def histogram_values(n: int, seed: int) -> np.ndarray:
    """int32 values in 0..BINS-1, in runs of 64 that cycle through four kinds: skewed towards small values
    (many threads of a block hit one bin at once), all one bin, all the last bin, and uniform."""
    rng = np.random.default_rng([seed, 1])
    values = np.minimum(rng.geometric(0.25, size=n) - 1, BINS - 1)
    for start in range(0, n, 64):
        run = slice(start, start + 64)
        kind = (start // 64 + seed) % 4
        if kind == 1:
            values[run] = rng.integers(0, BINS)
        elif kind == 2:
            values[run] = BINS - 1
        elif kind == 3:
            values[run] = rng.integers(0, BINS, size=len(values[run]))
    return values.astype(np.int32)


def _histogram_args(case: Case) -> dict:
    return {"values": histogram_values(case.params["n"], case.seed), "counts": np.empty(BINS, np.int32)}


HISTOGRAM_SPAN = 5  # zero a bin, read a value, count it, read a bin, flush it

HISTOGRAM = Task(
    name="histogram",
    cases=make_cases([{"n": n, "threads": t} for n, t in
                      ((1, 64), (7, 32), (31, 64), (33, 32), (64, 128), (100, 64), (257, 32), (1000, 128))]),
    make_args=_histogram_args,
    outputs=(Output("counts", fill=None),),
    reference=lambda case, args: {"counts": np.bincount(args["values"], minlength=BINS)},
    configure=_configure,
    exact=True,
    budgets=(
        Budget("global_loads", lambda p: p["n"], "global reads", "1 per value: each value is read once",
               "Each thread reads its own value once. A thread that scans the block's values for its bin "
               "reads each value BINS times: count into the shared histogram with atomics instead."),
        Budget("global_stores", lambda p: 0, "plain global writes",
               "none: counts is updated with atomic adds only",
               "Other blocks add to the same counters: flush each bin with cuda.atomic.add(counts, t, "
               "local[t]), not counts[t] = ... or counts[t] += ...."),
        Budget("global_atomics", lambda p: BINS * _blocks(p), "atomic adds to global memory",
               f"at most one per bin per block: {BINS} × the number of blocks",
               "Count into a shared-memory histogram first (privatisation), then add each of its bins to "
               "counts once per block."),
        Budget("max_thread_accesses", lambda p: HISTOGRAM_SPAN + 3 + 2 * (p["threads"] // WARP), SPAN,
               f"one value per thread, and for threads t < BINS one bin zeroed and flushed: "
               f"{HISTOGRAM_SPAN}; the budget allows 3 more, and 2 more per warp of the block (for "
               f"histograms kept per warp)",
               "One thread does the work of many (a loop over the block's values, or over all the bins): "
               "each thread counts its own value, and threads t < BINS zero and flush one bin each."),
    ),
    summary=f"privatised: 1 global read per value, at most {BINS} global atomic adds per block",
    hint="counts[v] is how many times v occurs in values, 0 included. Every update of a counter that other "
         "threads also update must be cuda.atomic.add. The check launches blocks of 32, 64 and 128 threads: "
         "thread i = cuda.grid(1) counts values[i]. The values include runs of one bin, of the last bin "
         f"({BINS - 1}) and of every bin.",
    unwritten_hint="",
    error_hints={
        "RaceError": "Threads touch a bin in two phases with no barrier between: separate zeroing, counting "
                     "and flushing with cuda.syncthreads().",
        "WriteConflictError": "Several threads updated the same counter with a plain `+=` or `=`: a "
                              "read-add-write of one element by many threads loses updates. Use "
                              "cuda.atomic.add(array, index, value), in shared and in global memory.",
        "UninitializedReadError": "The shared histogram starts with garbage: zero it (one bin per "
                                  "thread), then cuda.syncthreads() before counting.",
        "BarrierError": "Every thread must reach each cuda.syncthreads(): keep barriers outside `if` blocks.",
        "OutOfBoundsError": "Threads past the end of values must not read it, and the shared histogram has "
                            "BINS bins: only threads t < BINS zero and flush one. The check launches blocks "
                            "of several sizes: the global index is cuda.grid(1).",
    },
    hidden_sizes=({"n": 513, "threads": 256}, {"n": 130, "threads": 96}, {"n": 5, "threads": 32}),
)


def check_histogram(kernel, seeds=None) -> None:
    """Check cell of the histogram exercise (the check sets counts to 0 before each launch)."""
    check(HISTOGRAM.with_seeds(seeds) if seeds else HISTOGRAM, {"kernel": kernel})


# --------------------------------------------------------------------------------------------- warp_sum

def _warp_sum_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": block_inputs(n, case.seed, 2), "sums": np.empty(_cdiv(n, WARP), np.float32)}


def _warp_sum_reference(case: Case, args: dict) -> dict:
    a = args["a"].astype(np.float64)
    padded = np.zeros(_cdiv(a.size, WARP) * WARP)
    padded[: a.size] = a
    return {"sums": padded.reshape(-1, WARP).sum(axis=1)}


NO_SHARED = ("none: lanes exchange values by shuffles",
             "Use cuda.shfl_down_sync(0xFFFFFFFF, value, offset) instead of shared memory.")

WARP_SUM = Task(
    name="warp_sum",
    cases=make_cases([{"n": n, "threads": t} for n, t in
                      ((1, 64), (7, 32), (31, 64), (33, 32), (64, 128), (100, 64), (257, 128), (1000, 32))]),
    make_args=_warp_sum_args,
    outputs=(Output("sums"),),
    reference=_warp_sum_reference,
    configure=_configure,
    rtol=1e-5,
    atol=1e-5,
    budgets=(
        Budget("shared_loads", lambda p: 0, "shared-memory reads", *NO_SHARED),
        Budget("shared_stores", lambda p: 0, "shared-memory writes", *NO_SHARED),
        Budget("global_loads", lambda p: p["n"], "global reads", "1 per element", "Read a[i] once."),
        Budget("global_stores", lambda p: _cdiv(p["n"], WARP), "global writes", "1 per warp",
               "Only lane 0 of each warp writes."),
        Budget("global_atomics", lambda p: 0, "atomic adds to global memory", "none: lane 0 writes its sum",
               "Lanes combine their values by shuffles; lane 0 then stores the warp's sum with a plain "
               "write."),
        Budget("max_thread_accesses", lambda p: 2, SPAN, "each lane reads its element, lane 0 also writes",
               "One lane reads the values of its whole warp itself (a serial sum); each lane reads only a[i] "
               "and the values move between lanes by cuda.shfl_down_sync."),
        Budget("max_thread_collectives", lambda p: 6, "warp shuffles in its busiest lane",
               "log2(32) = 5 steps of a tree reduction, plus one broadcast if you want it",
               "Halve the offset each step (16, 8, 4, 2, 1): five shuffles add up 32 lanes. Fetching the "
               "lanes one by one with cuda.shfl_sync takes 31 steps: a serial sum in disguise."),
    ),
    summary="1 global read per element, 1 write per warp, no shared memory, 5 shuffle steps",
    hint="sums[w] is the sum of a[32*w : 32*w + 32] (missing elements count as 0). Halve the shuffle offset "
         "from 16 down to 1: after the step with offset 1, lane 0 holds the warp's total. The inputs include "
         "warps of zeros (write their 0) and of large whole numbers (up to ±10⁶: keep float32).",
    unwritten_hint="Lane 0 of every warp must write, whatever its sum (0 included): the lane is cuda.laneid "
                   "(threadIdx.x % 32), not threadIdx.x, and the warp's index in the whole grid is i // 32 "
                   "(the check launches blocks of 32, 64 and 128 threads).",
    error_hints={
        "OutOfBoundsError": "Lanes past the end of a must not read it (use 0 instead), and "
                            "warps with no element must not write sums.",
        "WriteConflictError": "Several lanes (or warps) wrote the same element of sums: only lane 0 of each "
                              "warp writes, to sums[i // 32], where i = cuda.grid(1) (never a block size "
                              "written as a number: the check launches blocks of several sizes).",
    },
    hidden_sizes=({"n": 513, "threads": 256}, {"n": 130, "threads": 96}, {"n": 2, "threads": 32}),
)


def check_warp_sum(kernel, seeds=None) -> None:
    """Check cell of the warp-shuffle reduction exercise."""
    check(WARP_SUM.with_seeds(seeds) if seeds else WARP_SUM, {"kernel": kernel})


# -------------------------------------------------------------------------------------------------- dot

def _dot_args(case: Case) -> dict:
    """a and b uniform in [-1, 1] with zeros, a few larger values, and a large last element."""
    n = case.params["n"]
    rng = np.random.default_rng([case.seed, 3])
    a, b = rng.uniform(-1.0, 1.0, size=(2, n))
    a[rng.random(n) < 0.1] = 0.0
    scale = rng.random(n) < 0.1
    a[scale] *= 8.0
    a[-1], b[-1] = 12.0, -9.0
    return {"a": a.astype(np.float32), "b": b.astype(np.float32), "out": np.empty(1, np.float32)}


def _dot_launch_rule(case: Case, launches: list) -> str | None:
    threads, n = case.params["threads"], case.params["n"]
    if len(launches) != 1:
        return f"it launched the kernel {len(launches)} times; one launch covers a."
    grid, block, _shared = launches[0]
    if block != [threads, 1, 1]:
        return (f"it used blocks of {'×'.join(map(str, block))} threads; the exercise asks for blocks of "
                f"`threads` = {threads} threads (1-D).")
    if grid != [_cdiv(n, threads), 1, 1]:
        return (f"it launched {'×'.join(map(str, grid))} blocks of {threads}; cdiv(a.size, threads) = "
                f"{_cdiv(n, threads)} blocks cover the {n} elements, each once.")
    return None


def _tree_span(p: dict) -> int:
    """Load a[i] and b[i], store the product, 3 accesses per tree step, read the total, add it to out."""
    return 3 + 3 * int(math.log2(p["threads"])) + 2


DOT = Task(
    name="dot",
    cases=make_cases([{"n": n, "threads": t} for n, t in
                      ((1, 32), (7, 64), (31, 128), (33, 32), (64, 256), (100, 64), (257, 128), (1000, 32),
                       (600, 256))]),
    make_args=_dot_args,
    outputs=(Output("out", fill=None),),
    reference=lambda case, args: {"out": np.array([args["a"].astype(np.float64) @ args["b"]])},
    launcher="launch_dot",
    launcher_extras=lambda case: (case.params["threads"],),
    launch_rule=_dot_launch_rule,
    rtol=1e-4,
    atol=1e-4,
    budgets=(
        Budget("static_shared_bytes", lambda p: 0, "bytes of static shared memory per block (arrays of a "
               "fixed size)", "none: the shared array is dynamic, cuda.shared.array(0, np.float32)",
               "Declare the array with size 0 and give its size in bytes as the launch's 4th parameter: a "
               "fixed size would have to be as large as the largest block ever launched."),
        Budget("dynamic_shared_bytes", lambda p: 4 * p["threads"], "bytes of dynamic shared memory per "
               "block", "one float32 per thread: threads × 4 bytes, the launch's 4th parameter",
               "Launch with kernel[blocks, threads, 0, threads * 4](...): the 4th parameter is the size of "
               "the dynamic shared array in bytes.", at_least=True),
        Budget("global_stores", lambda p: 0, "plain global writes", "none: out[0] is updated atomically",
               "Add to out[0] with cuda.atomic.add only."),
        Budget("global_loads", lambda p: 2 * p["n"], "global reads", "2 per element: a[i] and b[i]",
               "Each thread reads a[i] and b[i] once; later steps read shared memory."),
        Budget("global_atomics", _blocks, "atomic adds to global memory", "1 per block",
               "Only thread 0 of each block adds the block's total to out[0]."),
        Budget("shared_atomics", lambda p: 0, "atomic adds to shared memory",
               "none: the block's products are combined by a tree of plain additions",
               "Atomics on one shared element run one after another; halve the active threads at each step "
               "instead: thread t < stride adds products[t + stride] into products[t]."),
        Budget("max_thread_accesses", lambda p: _tree_span(p) + 4, SPAN,
               "the tree's span: 3 to load, 3 per step for log2(threads) steps, 2 to finish; the budget "
               "allows 4 more",
               "One thread adds up the block's products one after another (a loop in thread 0, np.sum on the "
               "array): use the tree, stride = cuda.blockDim.x // 2 halving down to 1."),
        Budget("shared_loads", lambda p: _blocks(p) * (p["threads"] - 1), "reads of shared memory",
               "threads - 1 per block at least: the tree's steps read the products from the shared array",
               "Combine all of the block's products in the dynamic shared array, a tree in which thread "
               "t < stride adds products[t + stride] into products[t], from stride = cuda.blockDim.x // 2: a "
               "tree that starts at a fixed stride covers only part of a larger block, and an atomic per "
               "thread or warp shuffles (exercise 2) skip the tree.", at_least=True),
    ),
    summary="dynamic shared memory, 2 global reads per element, 1 atomic add per block, a tree per block",
    hint="out[0] = sum of a[i] * b[i]. Each block sums its products in shared memory, then thread 0 adds the "
         "block's total with cuda.atomic.add(out, 0, total). Is every element covered by exactly one block? "
         "The check launches blocks of 32 to 256 threads: the tree starts at stride = cuda.blockDim.x // 2, "
         "never a number.",
    error_hints={
        "ResourceError": "The 4th launch argument is the size of the dynamic shared array in BYTES: "
                         "threads * 4 for float32 (np.dtype(np.float32).itemsize is 4).",
        "OutOfBoundsError": "Threads past the end of a and b must not read them: store 0 instead. The "
                            "shared array holds `threads` float32 values: the launch's 4th parameter is "
                            "threads * 4 bytes.",
        "RaceError": "Inside a block, separate the reduction steps with cuda.syncthreads(). Blocks add to "
                     "out[0] at the same time: use cuda.atomic.add.",
        "WriteConflictError": "Several threads (or blocks) wrote out[0] with a plain `+=` or `=`: add each "
                              "block's total with cuda.atomic.add(out, 0, total), from thread 0 only.",
    },
    hidden_sizes=({"n": 1025, "threads": 512}, {"n": 70, "threads": 1024}, {"n": 2, "threads": 32}),
)


def check_dot(kernel, launcher, seeds=None) -> None:
    """Check cell of the dot-product exercise: the kernel with the learner's launch function."""
    check(DOT.with_seeds(seeds) if seeds else DOT, {"kernel": kernel, "launch": launcher})


TASKS = (HISTOGRAM, WARP_SUM, DOT)
