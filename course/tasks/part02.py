"""Checks for exercise notebook 02 (shared memory and barriers): a block sum, a stencil with a shared-memory
halo, and a race to find and fix in a block scan.

The method of each task is a budget on gpusim's counters: global reads and writes (the halo is read once per
block), no atomics in the tree, and the span of the busiest thread (its element accesses): a tree of
log2(32) = 5 steps, not one thread looping over the block. The inputs mix blocks of uniform values, of zeros
and of large whole numbers of either sign (exact in float32, so any order of addition gives the same sums).
"""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, Output, Task, check, make_cases

THREADS = 32  # threads per block in every launch of this part
RADIUS = 2  # the stencil reads RADIUS neighbours on each side
STEPS = 5  # log2(THREADS): the steps of a tree reduction or a scan over one block

SIZES = (1, 7, 31, 32, 33, 34, 100, 257, 1000)
HIDDEN_SIZES = ({"n": 66}, {"n": 97}, {"n": 513}, {"n": 2})
BIG = 2 ** 20  # large values are whole multiples of 64 below BIG: sums of a block are exact in float32


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def block_inputs(n: int, seed: int, salt: int) -> np.ndarray:
    """float32 values in blocks of 32 that cycle through four kinds: uniform in [-1, 1] (with a few exact
    zeros), all zeros, large positive whole numbers and large negative ones. A block of large numbers sums
    exactly, and a window that straddles two blocks never mixes large values of both signs with fractions."""
    rng = np.random.default_rng([seed, salt])
    values = rng.uniform(-1.0, 1.0, size=n)
    values[rng.random(n) < 0.1] = 0.0
    big = 64.0 * rng.integers(1, BIG // 64, size=n)
    for start in range(0, n, THREADS):
        kind = (start // THREADS + seed) % 4
        block = slice(start, start + THREADS)
        if kind == 1:
            values[block] = big[block]
        elif kind == 2:
            values[block] = 0.0
        elif kind == 3:
            values[block] = -big[block]
    return values.astype(np.float32)


def _launch(case: Case) -> tuple:
    return (_cdiv(case.params["n"], THREADS), THREADS)


BARRIER_HINTS = {
    "RaceError": "Threads of a block read shared memory that other threads write in the same phase. Put "
                 "cuda.syncthreads() between the writes and the reads that depend on them.",
    "BarrierError": "Every thread of a block must reach the same cuda.syncthreads() calls: keep the barrier "
                    "outside any `if` that only some threads enter, and never `return` before a barrier (not "
                    "even for an element that is 0 or past the end).",
    "UninitializedReadError": "A thread read a shared-memory slot nobody wrote. Threads past the end of the "
                              "input still have to write their slot: store 0 there.",
}
NO_ATOMICS = ("no atomics: the values are combined by a tree of plain additions",
              "Atomics on one element run one after another; the task is a tree: at each step, thread t < "
              "stride adds tile[t + stride] into tile[t], then cuda.syncthreads().")


def _span_budget(limit: int, rule: str, hint: str) -> Budget:
    what = "element accesses (global and shared) in its busiest thread"
    return Budget("max_thread_accesses", lambda p: limit, what, rule, hint)


def _shared_tree_budgets(task: str) -> tuple[Budget, ...]:
    """Floors that make the tree (or scan) go through shared memory with barriers, as this notebook teaches:
    warp shuffles give the same values with neither, and are Part 3's subject."""
    hint = (f"{task} must combine the block's values through the shared tile: each thread stores its element "
            f"in tile[t], then in each of the {STEPS} steps reads tile slots the other threads wrote, with "
            f"cuda.syncthreads() between the steps. One thread that adds up a (a loop, np.sum on a slice) "
            f"skips the tile, and so do warp shuffles (cuda.shfl_*_sync), Part 3's tool.")
    return (
        Budget("shared_loads", lambda p: _cdiv(p["n"], THREADS) * (THREADS - 1), "reads of shared memory",
               f"{THREADS - 1} per block at least: the {STEPS} steps read the shared tile", hint,
               at_least=True),
        Budget("max_block_barriers", lambda p: STEPS, "barriers in its busiest block",
               f"one per step at least, {STEPS}", hint, at_least=True),
    )


# -------------------------------------------------------------------------------------------- block_sum

def _block_sum_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": block_inputs(n, case.seed, 1), "partial": np.empty(_cdiv(n, THREADS), np.float32)}


def _block_sum_reference(case: Case, args: dict) -> dict:
    a = args["a"].astype(np.float64)
    padded = np.zeros(_cdiv(a.size, THREADS) * THREADS)
    padded[: a.size] = a
    return {"partial": padded.reshape(-1, THREADS).sum(axis=1)}


TREE_SPAN = 2 + 3 * STEPS + 2  # load a[i], store tile[t]; 3 accesses per step; read tile[0], write partial

BLOCK_SUM = Task(
    name="block_sum",
    cases=make_cases([{"n": n} for n in SIZES]),
    make_args=_block_sum_args,
    outputs=(Output("partial"),),
    reference=_block_sum_reference,
    configure=_launch,
    rtol=1e-5,
    atol=1e-5,
    budgets=(
        Budget("global_loads", lambda p: p["n"], "global reads", "1 per input element",
               "Each thread reads its one element of a into shared memory; all later reads are from shared."),
        Budget("global_stores", lambda p: _cdiv(p["n"], THREADS), "global writes", "1 per block",
               "Only thread 0 of each block writes partial[blockIdx.x]."),
        Budget("shared_atomics", lambda p: 0, "atomic adds to shared memory", *NO_ATOMICS),
        Budget("global_atomics", lambda p: 0, "atomic adds to global memory", *NO_ATOMICS),
        _span_budget(TREE_SPAN + 5, f"the tree's span: a thread loads its element, takes part in "
                     f"log2(32) = {STEPS} steps of 3 accesses each and thread 0 writes the total, "
                     f"{TREE_SPAN} in all; the budget allows 5 more",
                     "One thread adds up many values one after another: the reduction is serial (a loop over "
                     "the block in thread 0, np.sum on a slice, every thread summing the whole tile). Halve "
                     "the number of active threads at each step instead: thread t < stride adds "
                     "tile[t + stride] into tile[t]."),
        *_shared_tree_budgets("block_sum"),
    ),
    summary=f"1 global read per element, 1 write per block, a tree of {STEPS} steps",
    hint="partial[b] is the sum of a[32*b : 32*b + 32]; elements past the end of a count as 0. The inputs "
         "include blocks of zeros and of large whole numbers (up to ±10⁶, beyond float16's range): keep the "
         "tile float32 and write every block's total, zero included.",
    unwritten_hint="Thread 0 of every block must write partial[blockIdx.x], whatever the total (0 included), "
                   "and there are cdiv(n, 32) blocks, the last one partly empty.",
    error_hints={
        **BARRIER_HINTS,
        "WriteConflictError": "Several threads of a block wrote partial[blockIdx.x]: the total is the "
                              "block's one result, so only thread 0 writes it (`if t == 0:`).",
    },
    hidden_sizes=HIDDEN_SIZES,
)


def check_block_sum(kernel, seeds=None) -> None:
    """Check cell of the block_sum exercise."""
    check(BLOCK_SUM.with_seeds(seeds) if seeds else BLOCK_SUM, {"kernel": kernel})


# ---------------------------------------------------------------------------------------------- stencil

def _stencil_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": block_inputs(n, case.seed, 2), "out": np.empty(n, np.float32)}


def _stencil_reference(case: Case, args: dict) -> dict:
    a = args["a"].astype(np.float64)
    padded = np.concatenate([np.zeros(RADIUS), a, np.zeros(RADIUS)])
    return {"out": sum(padded[k: k + a.size] for k in range(2 * RADIUS + 1))}


def _stencil_read_budget(p: dict) -> int:
    return p["n"] + 2 * RADIUS * _cdiv(p["n"], THREADS)


STENCIL_SPAN = 3 + 3 + (2 * RADIUS + 1) + 1  # a halo thread: 3 global reads, 3 shared writes, 5 reads, 1 out

STENCIL = Task(
    name="window_sum",
    cases=make_cases([{"n": n} for n in SIZES]),
    make_args=_stencil_args,
    outputs=(Output("out"),),
    reference=_stencil_reference,
    configure=_launch,
    rtol=1e-5,
    atol=1e-6,
    budgets=(
        Budget("global_loads", _stencil_read_budget, "global reads",
               f"each element once, plus the 2·RADIUS = {2 * RADIUS} halo elements of each block",
               "Load the block's tile and its halo into shared memory once, then read the window from shared "
               "memory: a thread must not read its neighbours from global memory."),
        Budget("global_stores", lambda p: p["n"], "global writes", "1 per element", "Write out[i] once."),
        _span_budget(STENCIL_SPAN + 4, f"each thread copies its element (the first RADIUS threads also one "
                     f"halo element on each side), reads its window of {2 * RADIUS + 1} and writes out[i], "
                     f"at most {STENCIL_SPAN}; the budget allows 4 more",
                     "One thread does the copying (or the summing) for many: every thread copies its own "
                     "element, and the first RADIUS threads also one element of each halo."),
        Budget("shared_loads", lambda p: (2 * RADIUS + 1) * p["n"], "reads of shared memory",
               f"{2 * RADIUS + 1} per element at least: every window is read from the shared tile",
               "Sum each window from the shared tile, tile[t] ... tile[t + 2·RADIUS], after a barrier. "
               "Reading the neighbours from global memory skips the tile, and so do warp shuffles "
               "(cuda.shfl_*_sync) that pass them from lane to lane, Part 3's tool.", at_least=True),
    ),
    summary=f"at most 1 global read per element plus {2 * RADIUS} per block, 1 write per element",
    hint=f"out[i] = a[i-{RADIUS}] + ... + a[i+{RADIUS}], where elements outside 0..n-1 count as 0. In shared "
         f"memory, a[i] sits at tile[t + RADIUS]; tile[0:RADIUS] is the left halo, "
         f"tile[RADIUS + THREADS:] the right halo: a[start - RADIUS ...] and a[start + THREADS ...], where "
         f"start = blockIdx.x * THREADS. The inputs include large whole numbers (up to ±10⁶): keep the tile "
         f"float32.",
    error_hints={
        **BARRIER_HINTS,
        "RaceError": "If the two accesses named above are both writes, two threads store into the same "
                     "slot of the tile: check the tile indices (the block's elements at tile[t + RADIUS], "
                     "the left halo at tile[0:RADIUS], the right halo at tile[RADIUS + THREADS:]). If one "
                     "thread reads a slot another writes, put cuda.syncthreads() between filling the tile "
                     "and reading it.",
        "WriteConflictError": "Two threads computed the same tile slot or the same i: thread t of block b "
                              "owns tile[t + RADIUS] and out[b * THREADS + t].",
    },
    hidden_sizes=HIDDEN_SIZES,
)


def check_window_sum(kernel, seeds=None) -> None:
    """Check cell of the window_sum (stencil with halo) exercise."""
    check(STENCIL.with_seeds(seeds) if seeds else STENCIL, {"kernel": kernel})


# ------------------------------------------------------------------------------------------- block_scan

def _scan_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": block_inputs(n, case.seed, 3), "out": np.empty(n, np.float32)}


def _scan_reference(case: Case, args: dict) -> dict:
    a = args["a"].astype(np.float64)
    out = np.empty_like(a)
    for start in range(0, a.size, THREADS):
        out[start: start + THREADS] = np.cumsum(a[start: start + THREADS])
    return {"out": out}


BLOCK_SCAN = Task(
    name="block_scan",
    cases=make_cases([{"n": n} for n in SIZES]),
    make_args=_scan_args,
    outputs=(Output("out"),),
    reference=_scan_reference,
    configure=_launch,
    rtol=1e-5,
    atol=1e-5,
    budgets=(
        Budget("global_loads", lambda p: p["n"], "global reads", "1 per element",
               "Read a[i] once into shared memory."),
        Budget("global_stores", lambda p: p["n"], "global writes", "1 per element", "Write out[i] once."),
        _span_budget(TREE_SPAN + 5, f"the scan's span: a thread loads its element, takes part in "
                     f"log2(32) = {STEPS} steps of at most 3 accesses each and writes out[i], {TREE_SPAN} in "
                     f"all; the budget allows 5 more",
                     "One thread adds up many values: a thread that sums tile[0..t] itself (O(n²) work in "
                     "all) or thread 0 scanning the block alone. Keep the given algorithm, 5 steps in which "
                     "every thread adds the value offset places to its left, and fix only its barriers."),
        *_shared_tree_budgets("block_scan"),
    ),
    summary="1 global read and 1 write per element, 5 parallel steps",
    hint="out[i] is the sum of a[start .. i], where start = 32 * (i // 32) is the first element of i's "
         "block. The inputs include blocks of large whole numbers and of fractions: keep the tile float32.",
    error_hints={
        **BARRIER_HINTS,
        "RaceError": "In one step, thread t reads tile[t - offset] while thread t - offset updates that same "
                     "slot. Read the value into a local variable, cuda.syncthreads(), then add it, then "
                     "cuda.syncthreads() again before the next step.",
        "WriteConflictError": "Two threads wrote the same element: thread t writes only its own tile[t] (and "
                              "out[i]), never a neighbour's slot.",
    },
    hidden_sizes=HIDDEN_SIZES,
)


def check_block_scan(kernel, seeds=None) -> None:
    """Check cell of the find-and-fix-the-race exercise (block_scan)."""
    check(BLOCK_SCAN.with_seeds(seeds) if seeds else BLOCK_SCAN, {"kernel": kernel})


TASKS = (BLOCK_SUM, STENCIL, BLOCK_SCAN)
