"""Checks for exercise notebook 03 (Numba CUDA): a privatised histogram with atomics, a warp-shuffle
reduction, and a dot product with dynamic shared memory and a learner-chosen launch.

Each task has a contract (:mod:`course.tasks.contract`). The kernels never fix their block size, so each
domain holds every block size the kernel's method allows: the histogram any block of BINS = 16 to 1024 threads
(threads t < BINS zero and flush one bin each), warp_sum whole warps (32, 64, ... 1024: every lane of a
shuffle must exist), the dot product's tree any power of two from 1 to 1024. The input families cover the
values' whole domain: every bin, one bin for all, the two end bins; and for the sums, the families of
:data:`course.tasks.part02.BLOCK_FAMILIES` and magnitudes log-uniform from 1e-15 to 1e15 for the dot
product's factors. Storage and arithmetic are float32 (int32 for the histogram). The method is every gpusim
counter against the reference solution of ``solutions/03_numba_cuda`` on the same case: the histogram's
global reads and atomic updates (privatisation: at most one per bin per block) and its int32 shared
histogram, warp_sum's shuffles and no shared memory, the dot product's dynamic shared memory (exactly one
float32 a thread, no static array) and one atomic add per block, and each one's span.
"""

from __future__ import annotations

import numpy as np

from .common import Case, Output, Task, check, print_hint
from .contract import EXACT, Budgeted, Contract, Family, Size, Slack, Solution, method
from .inputs import signed_magnitudes
from .part02 import BLOCK_FAMILIES, family_values

BINS = 16  # histogram bins
WARP = 32
MAX_THREADS = 1024
DRAWN_N = 1100  # drawn cases go up to this n, past the largest visible example (1000)
DRAWN_THREADS = 288  # and up to this many threads a block, past the largest visible block (simulating a
# block costs more than its threads: gpusim checks every pair of accesses to a shared slot for races)
DRAWN = 2  # cases drawn per check and set of seeds, on top of the explicit ones
NOTEBOOK = "03_numba_cuda"
WHOLE_WARPS = tuple(range(WARP, MAX_THREADS + 1, WARP))
POWERS_OF_TWO = tuple(2 ** k for k in range(11))
CHECK_LAUNCHES = {"blocks": "the check launches the kernel itself, cdiv(n, threads) blocks",
                  "threads": "the check launches the kernel itself, at the case's block size",
                  "dynamic_shared_bytes": "the check's launch gives none"}
COALESCED_HINT = ("Thread i = cuda.grid(1) reads element i: neighbouring threads then read neighbouring "
                  "elements, the fewest 32-byte sectors.")


def _coalesced() -> tuple[Budgeted, Budgeted]:
    return (Budgeted("global_sectors", "coalesced reads: thread i reads element i", COALESCED_HINT,
                     most=Slack(0.25, lambda r, p: 2, "2")),
            Budgeted("global_requests", "one warp-wide access per load and store instruction of a warp",
                     COALESCED_HINT, most=Slack(0.25)))


def _contract(name: str, sizes, families, method_, solution, examples, hidden, block_sizes: str) -> Contract:
    return Contract(
        name=f"part03.{name}",
        sizes=sizes,
        inputs=families,
        method=method_,
        solution=Solution(NOTEBOOK, solution),
        examples=tuple({"n": n, "threads": t} for n, t in examples),
        hidden_examples=tuple({"n": n, "threads": t} for n, t in hidden),
        drawn=DRAWN,
        block_sizes=block_sizes,
        cost=lambda p: p["n"] + _blocks(p) * p["threads"],
    )


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


HISTOGRAM_FAMILIES = (
    Family("runs", "runs of 64 values that cycle through: skewed towards small values, all one bin, all the "
                   "last bin, and uniform over the bins"),
    Family("uniform", f"uniform over the bins 0 .. {BINS - 1}"),
    Family("one_bin", "every value the same bin, 0 and the last one included"),
    Family("ends", f"only the two end bins, 0 and {BINS - 1}"),
)


def family_histogram_values(family: str, n: int, seed: int) -> np.ndarray:
    """n int32 values of one of HISTOGRAM_FAMILIES ("" is "runs", the values the notebook's cases had)."""
    if family in ("runs", ""):
        return histogram_values(n, seed)
    rng = np.random.default_rng([seed, 1, 1])
    if family == "uniform":
        values = rng.integers(0, BINS, size=n)
    elif family == "one_bin":
        values = np.full(n, rng.choice((0, BINS - 1, int(rng.integers(0, BINS)))))
    elif family == "ends":
        values = rng.choice((0, BINS - 1), size=n)
    else:
        raise ValueError(f"no input family {family!r}")
    return values.astype(np.int32)


def _histogram_args(case: Case) -> dict:
    return {"values": family_histogram_values(case.inputs, case.params["n"], case.seed),
            "counts": np.empty(BINS, np.int32)}


HISTOGRAM_SPAN = 5  # zero a bin, read a value, count it, read a bin, flush it

HISTOGRAM_CONTRACT = _contract(
    "histogram",
    (Size("n", 1, None, DRAWN_N, "values"),
     Size("threads", BINS, MAX_THREADS, DRAWN_THREADS, f"threads per block: {BINS} or more, so that threads "
          f"t < BINS can zero and flush one bin each")),
    HISTOGRAM_FAMILIES,
    method(
        (
            Budgeted("global_loads", "1 per value: each value is read once",
                     "Each thread reads its own value once. A thread that scans the block's values for its "
                     "bin reads each value BINS times: count into the shared histogram with atomics "
                     "instead."),
            Budgeted("global_stores", "none: counts is updated with atomic adds only",
                     "Other blocks add to the same counters: flush each bin with cuda.atomic.add(counts, t, "
                     "local[t]), not counts[t] = ... or counts[t] += ...."),
            Budgeted("global_atomics", lambda p: f"at most one per bin per block: {BINS} × "
                                                 f"{_blocks(p)} blocks here",
                     "Count into a shared-memory histogram first (privatisation), then add each of its bins "
                     "to counts once per block."),
            Budgeted("max_thread_accesses", f"one value per thread, and for threads t < BINS one bin zeroed "
                     f"and flushed: {HISTOGRAM_SPAN}",
                     "One thread does the work of many (a loop over the block's values, or over all the "
                     "bins): each thread counts its own value, and threads t < BINS zero and flush one bin "
                     "each.", most=Slack(extra=lambda r, p: 3, words="3")),
            Budgeted("shared_atomics", "one per value, into the block's shared histogram",
                     "Each thread adds its one value to the shared histogram with cuda.atomic.add(local, "
                     "values[i], 1), once."),
            Budgeted("static_shared_bytes", f"one int32 histogram of {BINS} bins a block ({4 * BINS} bytes)",
                     "Declare the shared histogram as cuda.shared.array(BINS, np.int32): one int32 counter a "
                     "bin, one histogram a block.", least=EXACT),
            Budgeted("shared_loads", "one read of each bin, to flush it",
                     "Count with cuda.atomic.add(local, values[i], 1): a plain local[v] += 1 reads the bin "
                     "first, and loses updates when several threads of a block count into one bin."),
            Budgeted("max_block_barriers", "two: after zeroing the bins and after counting",
                     "cuda.syncthreads() after zeroing the shared histogram and after counting, reached by "
                     "every thread.", most=Slack(extra=lambda r, p: 1, words="1")),
            Budgeted("barriers", "two per block", "cuda.syncthreads() after zeroing the shared histogram and "
                     "after counting.", most=Slack(extra=lambda r, p: r["blocks"], words="1 per block")),
            *_coalesced(),
            Budgeted("active_threads", "every thread with a value counting it", "", most=None, least=EXACT),
        ),
        free=CHECK_LAUNCHES),
    (("kernel", "histogram"),),
    ((1, 64), (7, 32), (31, 64), (33, 32), (64, 128), (100, 64), (257, 32), (1000, 128)),
    ((513, 256), (130, 96), (5, 32), (40, 17)),
    f"any block of {BINS} to 1024 threads, multiples of 32 or not",
)

HISTOGRAM = Task(
    name="histogram",
    cases=HISTOGRAM_CONTRACT.cases(),
    contract=HISTOGRAM_CONTRACT,
    make_args=_histogram_args,
    outputs=(Output("counts", fill=None),),
    reference=lambda case, args: {"counts": np.bincount(args["values"], minlength=BINS)},
    configure=_configure,
    exact=True,
    summary=f"privatised: 1 global read per value, at most {BINS} global atomic adds per block, at any block "
            f"size from {BINS} to 1024",
    hint="counts[v] is how many times v occurs in values, 0 included. Every update of a counter that other "
         "threads also update must be cuda.atomic.add. The check launches blocks of 16 to 1024 threads, "
         "whole warps or not: thread i = cuda.grid(1) counts values[i]. The values include runs of one bin, "
         f"of the last bin ({BINS - 1}) and of every bin.",
    more_hints=("local = cuda.shared.array(BINS, np.int32); threads t < BINS set local[t] = 0; "
                "cuda.syncthreads(); if i < values.size: cuda.atomic.add(local, values[i], 1); "
                "cuda.syncthreads(); threads t < BINS add local[t] to counts[t] with cuda.atomic.add. Each "
                "step is one line, and no thread loops.",),
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
)


def check_histogram(kernel, seeds=None) -> None:
    """Check cell of the histogram exercise (the check sets counts to 0 before each launch)."""
    check(HISTOGRAM.with_seeds(seeds) if seeds else HISTOGRAM, {"kernel": kernel})


# --------------------------------------------------------------------------------------------- warp_sum

def _warp_sum_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": family_values(case.inputs, n, case.seed, 2), "sums": np.empty(_cdiv(n, WARP), np.float32)}


def _warp_totals(a: np.ndarray) -> np.ndarray:
    padded = np.zeros(_cdiv(a.size, WARP) * WARP)
    padded[: a.size] = a
    return padded.reshape(-1, WARP).sum(axis=1)


def _warp_sum_reference(case: Case, args: dict) -> dict:
    return {"sums": _warp_totals(args["a"].astype(np.float64))}


NO_SHARED = "Use cuda.shfl_down_sync(0xFFFFFFFF, value, offset) instead of shared memory."

WARP_SUM_CONTRACT = _contract(
    "warp_sum",
    (Size("n", 1, None, DRAWN_N, "elements"),
     Size("threads", WARP, MAX_THREADS, DRAWN_THREADS, "threads per block, whole warps: every lane of a "
          "shuffle with the full mask 0xFFFFFFFF must exist", choices=WHOLE_WARPS)),
    BLOCK_FAMILIES,
    method(
        (
            Budgeted("global_loads", "1 per element", "Read a[i] once."),
            Budgeted("global_stores", "1 per warp", "Only lane 0 of each warp writes."),
            Budgeted("global_atomics", "none: lane 0 writes its sum",
                     "Lanes combine their values by shuffles; lane 0 then stores the warp's sum with a plain "
                     "write."),
            Budgeted("static_shared_bytes", "none: lanes exchange values by shuffles", NO_SHARED,
                     least=EXACT),
            Budgeted("shared_loads", "none: lanes exchange values by shuffles", NO_SHARED),
            Budgeted("shared_stores", "none: lanes exchange values by shuffles", NO_SHARED),
            Budgeted("max_thread_accesses", "each lane reads its element, lane 0 also writes",
                     "One lane reads the values of its whole warp itself (a serial sum); each lane reads "
                     "only a[i] and the values move between lanes by cuda.shfl_down_sync."),
            Budgeted("max_thread_collectives", "log2(32) = 5 steps of a tree reduction, plus one broadcast "
                     "if you want it",
                     "Halve the offset each step (16, 8, 4, 2, 1): five shuffles add up 32 lanes. Fetching "
                     "the lanes one by one with cuda.shfl_sync takes 31 steps: a serial sum in disguise.",
                     most=Slack(extra=lambda r, p: 1, words="1"), least=EXACT),
            *_coalesced(),
            Budgeted("active_threads", "every lane with an element reading it", "", most=None, least=EXACT),
        ),
        free=CHECK_LAUNCHES),
    (("kernel", "warp_sum"),),
    ((1, 64), (7, 32), (31, 64), (33, 32), (64, 128), (100, 64), (257, 128), (1000, 32)),
    ((513, 256), (130, 96), (2, 32), (70, 1024)),
    "any whole number of warps, 32 to 1024 threads",
)

WARP_SUM = Task(
    name="warp_sum",
    cases=WARP_SUM_CONTRACT.cases(),
    contract=WARP_SUM_CONTRACT,
    make_args=_warp_sum_args,
    outputs=(Output("sums"),),
    reference=_warp_sum_reference,
    scale=lambda case, args: {"sums": _warp_totals(np.abs(args["a"].astype(np.float64)))},
    scale_words="(the sum of the warp's |a|)",
    configure=_configure,
    rtol=1e-5,
    atol=0.0,
    summary="1 global read per element, 1 write per warp, no shared memory, 5 shuffle steps, at any number "
            "of warps a block",
    hint="sums[w] is the sum of a[32*w : 32*w + 32] (missing elements count as 0). Halve the shuffle offset "
         "from 16 down to 1: after the step with offset 1, lane 0 holds the warp's total. The inputs include "
         "warps of zeros (write their 0), of large whole numbers (up to ±10⁶) and values from 1e-30 to 1e30: "
         "keep the value float32.",
    more_hints=("i = cuda.grid(1); value = a[i] if i < a.size else np.float32(0.0) (a bare 0.0 would make "
                "value float64); for offset = 16, 8, 4, 2, 1: value += cuda.shfl_down_sync(0xFFFFFFFF, "
                "value, offset); then, if cuda.laneid == 0 and i // 32 < sums.size: sums[i // 32] = value.",),
    unwritten_hint="Lane 0 of every warp must write, whatever its sum (0 included): the lane is cuda.laneid "
                   "(threadIdx.x % 32), not threadIdx.x, and the warp's index in the whole grid is i // 32 "
                   "(the check launches blocks of 1 to 32 warps).",
    error_hints={
        "OutOfBoundsError": "Lanes past the end of a must not read it (use 0 instead), and "
                            "warps with no element must not write sums.",
        "WriteConflictError": "Several lanes (or warps) wrote the same element of sums: only lane 0 of each "
                              "warp writes, to sums[i // 32], where i = cuda.grid(1) (never a block size "
                              "written as a number: the check launches blocks of several sizes).",
    },
)


def check_warp_sum(kernel, seeds=None) -> None:
    """Check cell of the warp-shuffle reduction exercise."""
    check(WARP_SUM.with_seeds(seeds) if seeds else WARP_SUM, {"kernel": kernel})


# -------------------------------------------------------------------------------------------------- dot

DOT_FAMILIES = (
    Family("mixed", "uniform in [-1, 1] with zeros, a few values 8 times larger, and a large last element"),
    Family("uniform", "uniform in [-1, 1]"),
    Family("wide", "signs at random, magnitudes log-uniform from 1e-15 to 1e15, a tenth of them 0 (every "
                   "product within 1e±30)"),
    Family("negative", "every product negative: a below 0 and b above, magnitudes log-uniform from 1e-15 to "
                       "1e15"),
)


def _dot_args(case: Case) -> dict:
    """a and b of the case's family; "mixed" holds zeros, a few larger values, and a large last element."""
    n = case.params["n"]
    rng = np.random.default_rng([case.seed, 3])
    if case.inputs in ("mixed", ""):
        a, b = rng.uniform(-1.0, 1.0, size=(2, n))
        a[rng.random(n) < 0.1] = 0.0
        scale = rng.random(n) < 0.1
        a[scale] *= 8.0
        a[-1], b[-1] = 12.0, -9.0
    elif case.inputs == "uniform":
        a, b = rng.uniform(-1.0, 1.0, size=(2, n))
    elif case.inputs == "wide":
        a, b = signed_magnitudes(rng, (2, n), (-15.0, 15.0))
    elif case.inputs == "negative":
        a, b = np.abs(signed_magnitudes(rng, (2, n), (-15.0, 15.0), zeros=0.0))
        a = -a
    else:
        raise ValueError(f"no input family {case.inputs!r}")
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


DOT_TREE = ("Combine all of the block's products in the dynamic shared array, a tree in which thread "
            "t < stride adds products[t + stride] into products[t], from stride = cuda.blockDim.x // 2: a "
            "tree that starts at a fixed stride covers only part of a larger block, and an atomic per "
            "thread or warp shuffles (exercise 2) skip the tree.")

DOT_CONTRACT = _contract(
    "dot",
    (Size("n", 1, None, DRAWN_N, "elements of a and b"),
     Size("threads", 1, MAX_THREADS, DRAWN_THREADS, "threads per block, the launch function's argument: a "
          "power of two, so that the tree's stride halves down to 1", choices=POWERS_OF_TWO)),
    DOT_FAMILIES,
    method(
        (
            Budgeted("static_shared_bytes", "none: the shared array is dynamic, cuda.shared.array(0, "
                     "np.float32)",
                     "Declare the array with size 0 and give its size in bytes as the launch's 4th "
                     "parameter: a fixed size would have to be as large as the largest block ever launched.",
                     least=EXACT),
            Budgeted("dynamic_shared_bytes",
                     lambda p: f"one float32 per thread: threads × 4 = {4 * p['threads']} bytes, the "
                               f"launch's 4th parameter",
                     "Launch with kernel[blocks, threads, 0, threads * 4](...): the 4th parameter is the "
                     "size of the dynamic shared array in bytes, 4 for each float32 (np.float32's itemsize); "
                     "more is memory no thread uses, which limits how many blocks fit on a multiprocessor.",
                     least=EXACT),
            Budgeted("global_stores", "none: out[0] is updated atomically",
                     "Add to out[0] with cuda.atomic.add only."),
            Budgeted("global_loads", "2 per element: a[i] and b[i]",
                     "Each thread reads a[i] and b[i] once; later steps read shared memory."),
            Budgeted("global_atomics", "1 per block",
                     "Only thread 0 of each block adds the block's total to out[0]."),
            Budgeted("shared_atomics", "none: the block's products are combined by a tree of plain additions",
                     "Atomics on one shared element run one after another; halve the active threads at each "
                     "step instead: thread t < stride adds products[t + stride] into products[t]."),
            Budgeted("max_thread_accesses", "the tree's span: 3 to load, 3 per step for log2(threads) steps, "
                     "2 to finish",
                     "One thread adds up the block's products one after another (a loop in thread 0, np.sum "
                     "on the array): use the tree, stride = cuda.blockDim.x // 2 halving down to 1.",
                     most=Slack(extra=lambda r, p: 4, words="4")),
            Budgeted("shared_loads", "the reads of the reference's tree", DOT_TREE, most=Slack(0.25),
                     least=Slack(0.5)),
            Budgeted("max_block_barriers", "one after storing the products and one per step of the tree",
                     DOT_TREE, most=Slack(extra=lambda r, p: 1, words="1"),
                     least=Slack(extra=lambda r, p: 1, words="1")),
            Budgeted("barriers", "the same barriers in every block", DOT_TREE,
                     most=Slack(extra=lambda r, p: r["blocks"], words="1 per block")),
            Budgeted("shared_stores", "the writes of the reference's tree", DOT_TREE, most=Slack(0.25)),
            Budgeted("shared_requests", "the warp-wide accesses of the reference's tree", DOT_TREE,
                     most=Slack(0.25)),
            *_coalesced(),
            Budgeted("active_threads", "every thread of a block storing its product", "", most=None,
                     least=EXACT),
        ),
        free={"blocks": "the launch rule checks the grid: cdiv(a.size, threads) blocks",
              "threads": "the launch rule checks the blocks: `threads` threads"}),
    (("kernel", "dot"), ("launch", "launch_dot")),
    ((1, 32), (7, 64), (31, 128), (33, 32), (64, 256), (100, 64), (257, 128), (1000, 32), (600, 256)),
    ((1025, 512), (70, 1024), (2, 32), (45, 8)),
    "any power of two from 1 to 1024 threads, the launch function's `threads`",
)

DOT = Task(
    name="dot",
    cases=DOT_CONTRACT.cases(),
    contract=DOT_CONTRACT,
    make_args=_dot_args,
    outputs=(Output("out", fill=None),),
    reference=lambda case, args: {"out": np.array([args["a"].astype(np.float64) @ args["b"]])},
    launcher="launch_dot",
    launcher_extras=lambda case: (case.params["threads"],),
    launch_rule=_dot_launch_rule,
    scale=lambda case, args: {"out": np.array([np.abs(args["a"].astype(np.float64)) @ np.abs(args["b"])])},
    scale_words="(the sum of |a[i] * b[i]|)",
    rtol=1e-4,
    atol=0.0,
    more_hints=("In the kernel: products = cuda.shared.array(0, np.float32); products[t] = a[i] * b[i] if "
                "i < a.size else np.float32(0.0); cuda.syncthreads(); stride = cuda.blockDim.x // 2, halving "
                "down to 1: threads t < stride add products[t + stride] into products[t], then a barrier for "
                "every thread; thread 0 then does cuda.atomic.add(out, 0, products[0]). In launch_dot: "
                "blocks = cdiv(a.size, threads), and kernel[blocks, threads, 0, threads * 4](a, b, out): 4 "
                "bytes of dynamic shared memory a thread, one float32 each.",),
    summary="dynamic shared memory, 2 global reads per element, 1 atomic add per block, a tree per block",
    hint="out[0] = sum of a[i] * b[i]. Each block sums its products in shared memory, then thread 0 adds the "
         "block's total with cuda.atomic.add(out, 0, total). Is every element covered by exactly one block? "
         "The check launches blocks of 1 to 1024 threads, any power of two: the tree starts at stride = "
         "cuda.blockDim.x // 2, never a number.",
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
)


def check_dot(kernel, launcher, seeds=None) -> None:
    """Check cell of the dot-product exercise: the kernel with the learner's launch function."""
    check(DOT.with_seeds(seeds) if seeds else DOT, {"kernel": kernel, "launch": launcher})


def hint(name: str, level: int = 2) -> None:
    """Print hint ``level`` of a task of this notebook (level 1 is the one the check's messages show)."""
    print_hint(TASKS, name, level)


TASKS = (HISTOGRAM, WARP_SUM, DOT)
