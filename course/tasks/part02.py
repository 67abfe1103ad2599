"""Checks for exercise notebook 02 (shared memory and barriers): a block sum, a stencil with a shared-memory
halo, and a race to find and fix in a block scan.

Each task has a contract (:mod:`course.tasks.contract`): any n from 1 up (blocks of THREADS = 32, which the
notebook fixes), the input families of :data:`BLOCK_FAMILIES` (blocks of zeros and of large whole numbers,
uniform values, and signs and magnitudes log-uniform from 1e-30 to 1e30), float32 storage and arithmetic, and
the method as limits on every gpusim counter against the reference solution of
``solutions/02_shared_memory_and_barriers`` on the same case: global reads and writes (the halo read once per
block), one float32 tile of shared memory (bounded on both sides), no atomics and no shuffles, the barriers
of a tree of log2(32) = 5 steps, and the span of the busiest thread (a tree, not one thread looping over the
block). The tolerance is relative to the sum of the magnitudes each output adds up.
"""

from __future__ import annotations

import numpy as np

from .common import Case, Output, Task, check, print_hint
from .contract import EXACT, Budgeted, Contract, Family, Size, Slack, Solution, method
from .inputs import signed_magnitudes

THREADS = 32  # threads per block in every launch of this part
RADIUS = 2  # the stencil reads RADIUS neighbours on each side
STEPS = 5  # log2(THREADS): the steps of a tree reduction or a scan over one block

SIZES = (1, 7, 31, 32, 33, 34, 100, 257, 1000)
HIDDEN_SIZES = (66, 97, 513, 2)
BIG = 2 ** 20  # large values are whole multiples of 64 below BIG: sums of a block are exact in float32
DRAWN_N = 1200  # drawn cases go up to this n, past the largest example (1000)
DRAWN = 2  # cases drawn per check and set of seeds, on top of the explicit ones
NOTEBOOK = "02_shared_memory_and_barriers"
FLOAT_BYTES = 4


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


BLOCK_FAMILIES = (
    Family("blocks", "blocks of 32 that cycle through uniform values in [-1, 1] (a tenth of them 0), zeros, "
                     "and large whole numbers of either sign up to ±10⁶"),
    Family("uniform", "uniform in [-1, 1]"),
    Family("wide", "signs at random, magnitudes log-uniform from 1e-30 to 1e30, a tenth of them 0"),
    Family("negative", "every value negative, magnitudes log-uniform from 1e-30 to 1e30"),
)


def family_values(family: str, n: int, seed: int, salt: int) -> np.ndarray:
    """n float32 values of one of BLOCK_FAMILIES ("" is "blocks", the values the notebook's cases had)."""
    if family in ("blocks", ""):
        return block_inputs(n, seed, salt)
    rng = np.random.default_rng([seed, salt, 1])
    if family == "uniform":
        values = rng.uniform(-1.0, 1.0, size=n)
    elif family == "wide":
        values = signed_magnitudes(rng, n, (-30.0, 30.0))
    elif family == "negative":
        values = -np.abs(signed_magnitudes(rng, n, (-30.0, 30.0), zeros=0.0))
    else:
        raise ValueError(f"no input family {family!r}")
    return values.astype(np.float32)


def _launch(case: Case) -> tuple:
    return (_cdiv(case.params["n"], THREADS), THREADS)


def _sizes() -> tuple[Size, ...]:
    return (Size("n", 1, None, DRAWN_N, "elements; blocks of THREADS = 32 threads, cdiv(n, 32) of them"),)


def _contract(name: str, method_, solution: str) -> Contract:
    return Contract(
        name=f"part02.{name}",
        sizes=_sizes(),
        inputs=BLOCK_FAMILIES,
        method=method_,
        solution=Solution(NOTEBOOK, (("kernel", solution),)),
        examples=tuple({"n": n} for n in SIZES),
        hidden_examples=tuple({"n": n} for n in HIDDEN_SIZES),
        drawn=DRAWN,
        block_sizes="32 threads (THREADS), which the notebook fixes",
        cost=lambda p: p["n"],
    )


def _tree_method(budgets, span_hint: str, shared_hint: str):
    """Every counter against the reference: the ``budgets`` given first, then the tree's shared memory
    (one float32 tile, read and written within a quarter of the reference, no bank conflicts), its barriers
    (one more allowed, at most one fewer), no atomics or shuffles, and coalesced global accesses."""
    return method(
        (
            *budgets,
            Budgeted("shared_atomics", "none: a tree of plain additions", NO_ATOMICS[1]),
            Budgeted("global_atomics", "none: a tree of plain additions", NO_ATOMICS[1]),
            Budgeted("max_thread_accesses", "the span of the reference's tree", span_hint,
                     most=Slack(extra=lambda r, p: 5, words="5")),
            Budgeted("shared_loads", "the reads of the reference's tree", TREE_HINT, most=Slack(0.25),
                     least=Slack(0.5)),
            Budgeted("max_block_barriers", f"one after loading the tile and one per step of the tree "
                     f"({STEPS} steps)", BARRIERS_HINT, most=Slack(extra=lambda r, p: 1, words="1"),
                     least=Slack(extra=lambda r, p: 1, words="1")),
            Budgeted("max_thread_collectives", "none: the values move through the shared tile",
                     "Warp shuffles (cuda.shfl_*_sync) are Part 3's tool: here the block's values go through "
                     "the shared tile, with cuda.syncthreads() between the steps."),
            Budgeted("static_shared_bytes", "one float32 tile (4 bytes a slot)", shared_hint, least=EXACT),
            Budgeted("barriers", "the same barriers in every block", BARRIERS_HINT,
                     most=Slack(extra=lambda r, p: r["blocks"], words="1 per block")),
            Budgeted("shared_stores", "the writes of the reference's tree", TREE_HINT, most=Slack(0.25)),
            Budgeted("shared_requests", "the warp-wide accesses of the reference's tree", TREE_HINT,
                     most=Slack(0.25)),
            Budgeted("global_sectors", "coalesced accesses: thread t of a block reads a[i], i = cuda.grid(1)",
                     COALESCED_HINT, most=Slack(0.25, lambda r, p: 2, "2")),
            Budgeted("global_requests", "one warp-wide access per load and store instruction of a warp",
                     COALESCED_HINT, most=Slack(0.25)),
            Budgeted("active_threads", "every thread of a block storing its slot of the tile", "", most=None,
                     least=EXACT),
        ),
        free={"blocks": "the check launches the kernel itself, cdiv(n, 32) blocks",
              "threads": "the check launches the kernel itself, 32 threads a block",
              "dynamic_shared_bytes": "the launch gives none"})


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
TREE_HINT = (f"Combine the block's values through the shared tile: each thread stores its element in "
             f"tile[t], then in each of the {STEPS} steps reads tile slots the other threads wrote, with "
             f"cuda.syncthreads() between the steps. One thread that adds up a (a loop, np.sum on a slice) "
             f"skips the tile, and so do warp shuffles (cuda.shfl_*_sync), Part 3's tool.")
BARRIERS_HINT = (f"One cuda.syncthreads() after filling the tile and one after each of the {STEPS} steps "
                 f"(the scan: one between reading and writing, one after writing), reached by every thread; "
                 f"the steps stop once the stride (offset) has covered the 32 threads, and a step that no "
                 f"thread needs still costs its barriers.")
COALESCED_HINT = ("Thread t of block b handles element i = b * 32 + t = cuda.grid(1): neighbouring threads "
                  "then read neighbouring elements, the fewest 32-byte sectors.")
TILE_HINT = ("Declare the tile as cuda.shared.array({size}, np.float32): one float32 slot per {what}. A "
             "float64 tile takes twice the shared memory (and float64 adds, which a GPU runs many times "
             "slower), and a float16 one cannot hold the inputs.")


# -------------------------------------------------------------------------------------------- block_sum

def _block_sum_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": family_values(case.inputs, n, case.seed, 1),
            "partial": np.empty(_cdiv(n, THREADS), np.float32)}


def _block_totals(a: np.ndarray) -> np.ndarray:
    padded = np.zeros(_cdiv(a.size, THREADS) * THREADS)
    padded[: a.size] = a
    return padded.reshape(-1, THREADS).sum(axis=1)


def _block_sum_reference(case: Case, args: dict) -> dict:
    return {"partial": _block_totals(args["a"].astype(np.float64))}


def _block_sum_scale(case: Case, args: dict) -> dict:
    return {"partial": _block_totals(np.abs(args["a"].astype(np.float64)))}


TREE_SPAN = 2 + 3 * STEPS + 2  # load a[i], store tile[t]; 3 accesses per step; read tile[0], write partial

BLOCK_SUM_CONTRACT = _contract("block_sum", _tree_method(
    (
        Budgeted("global_loads", "1 per input element", "Each thread reads its one element of a into shared "
                 "memory; all later reads are from shared."),
        Budgeted("global_stores", "1 per block", "Only thread 0 of each block writes partial[blockIdx.x]."),
    ),
    "One thread adds up many values one after another: the reduction is serial (a loop over the block in "
    "thread 0, np.sum on a slice, every thread summing the whole tile). Halve the number of active threads "
    "at each step instead: thread t < stride adds tile[t + stride] into tile[t].",
    TILE_HINT.format(size="THREADS", what="thread of the block")), "block_sum")

BLOCK_SUM = Task(
    name="block_sum",
    cases=BLOCK_SUM_CONTRACT.cases(),
    contract=BLOCK_SUM_CONTRACT,
    make_args=_block_sum_args,
    outputs=(Output("partial"),),
    reference=_block_sum_reference,
    scale=_block_sum_scale,
    scale_words="(the sum of the block's |a|)",
    configure=_launch,
    rtol=1e-5,
    atol=0.0,
    summary=f"1 global read per element, 1 write per block, a tree of {STEPS} steps in one float32 tile",
    hint="partial[b] is the sum of a[32*b : 32*b + 32]; elements past the end of a count as 0. The inputs "
         "include blocks of zeros, of large whole numbers (up to ±10⁶, beyond float16's range) and values "
         "from 1e-30 to 1e30: keep the tile float32 and write every block's total, zero included.",
    more_hints=(f"tile = cuda.shared.array(THREADS, np.float32); thread t stores a[i] (0.0 past the end) in "
                f"tile[t] and waits at cuda.syncthreads(). Then stride = 16, 8, 4, 2, 1: threads t < stride "
                f"add tile[t + stride] into tile[t], and every thread waits at a barrier after each step "
                f"(outside the `if`). Thread 0 then writes tile[0] to partial[cuda.blockIdx.x]: "
                f"{TREE_SPAN} element accesses in thread 0, {STEPS + 1} barriers.",),
    unwritten_hint="Thread 0 of every block must write partial[blockIdx.x], whatever the total (0 included), "
                   "and there are cdiv(n, 32) blocks, the last one partly empty.",
    error_hints={
        **BARRIER_HINTS,
        "WriteConflictError": "Several threads of a block wrote partial[blockIdx.x]: the total is the "
                              "block's one result, so only thread 0 writes it (`if t == 0:`).",
    },
)


def check_block_sum(kernel, seeds=None) -> None:
    """Check cell of the block_sum exercise."""
    check(BLOCK_SUM.with_seeds(seeds) if seeds else BLOCK_SUM, {"kernel": kernel})


# ---------------------------------------------------------------------------------------------- stencil

def _stencil_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": family_values(case.inputs, n, case.seed, 2), "out": np.empty(n, np.float32)}


def _windows(a: np.ndarray) -> np.ndarray:
    padded = np.concatenate([np.zeros(RADIUS), a, np.zeros(RADIUS)])
    return sum(padded[k: k + a.size] for k in range(2 * RADIUS + 1))


def _stencil_reference(case: Case, args: dict) -> dict:
    return {"out": _windows(args["a"].astype(np.float64))}


def _stencil_scale(case: Case, args: dict) -> dict:
    return {"out": _windows(np.abs(args["a"].astype(np.float64)))}


def _stencil_read_budget(p: dict) -> int:
    return p["n"] + 2 * RADIUS * _cdiv(p["n"], THREADS)


STENCIL_SPAN = 3 + 3 + (2 * RADIUS + 1) + 1  # a halo thread: 3 global reads, 3 shared writes, 5 reads, 1 out

STENCIL_CONTRACT = _contract("window_sum", method(
    (
        Budgeted("global_loads", lambda p: f"each element once, plus the 2·RADIUS = {2 * RADIUS} halo "
                                           f"elements of each block: {_stencil_read_budget(p)} here at most",
                 "Load the block's tile and its halo into shared memory once, then read the window from "
                 "shared memory: a thread must not read its neighbours from global memory."),
        Budgeted("global_stores", "1 per element", "Write out[i] once."),
        Budgeted("max_thread_accesses", f"each thread copies its element (the first RADIUS threads also one "
                 f"halo element on each side), reads its window of {2 * RADIUS + 1} and writes out[i]: at "
                 f"most {STENCIL_SPAN}",
                 "One thread does the copying (or the summing) for many: every thread copies its own "
                 "element, and the first RADIUS threads also one element of each halo.",
                 most=Slack(extra=lambda r, p: 4, words="4")),
        Budgeted("shared_loads", f"{2 * RADIUS + 1} per element: every window is read from the shared tile",
                 "Sum each window from the shared tile, tile[t] ... tile[t + 2·RADIUS], after a barrier. "
                 "Reading the neighbours from global memory skips the tile, and so do warp shuffles "
                 "(cuda.shfl_*_sync) that pass them from lane to lane, Part 3's tool.", most=Slack(0.25),
                 least=EXACT),
        Budgeted("max_thread_collectives", "none: the window is read from the shared tile",
                 "Warp shuffles (cuda.shfl_*_sync) that pass neighbours from lane to lane are Part 3's tool: "
                 "here each window is read from the shared tile."),
        Budgeted("static_shared_bytes", f"one float32 tile of THREADS + 2·RADIUS = {THREADS + 2 * RADIUS} "
                 f"slots", TILE_HINT.format(size="TILE", what="element of the block and of its halo"),
                 least=EXACT),
        Budgeted("max_block_barriers", "one, between filling the tile and reading the windows",
                 BARRIER_HINTS["RaceError"], most=Slack(extra=lambda r, p: 1, words="1"), least=EXACT),
        Budgeted("barriers", "one per block", BARRIER_HINTS["RaceError"],
                 most=Slack(extra=lambda r, p: r["blocks"], words="1 per block")),
        Budgeted("shared_stores", "each slot of the tile written once", "Thread t writes tile[t + RADIUS]; "
                 "threads t < RADIUS also one slot of each halo.", most=Slack(0.25)),
        Budgeted("shared_requests", "the warp-wide accesses of the reference", "", most=Slack(0.25)),
        Budgeted("global_sectors", "coalesced accesses: thread t of a block reads a[i], i = cuda.grid(1)",
                 COALESCED_HINT, most=Slack(0.25, lambda r, p: 2, "2")),
        Budgeted("global_requests", "one warp-wide access per load and store instruction of a warp",
                 COALESCED_HINT, most=Slack(0.25)),
        Budgeted("active_threads", "every thread of a block storing its slot of the tile", "", most=None,
                 least=EXACT),
    ),
    free={"blocks": "the check launches the kernel itself, cdiv(n, 32) blocks",
          "threads": "the check launches the kernel itself, 32 threads a block",
          "dynamic_shared_bytes": "the launch gives none"}), "window_sum")

STENCIL = Task(
    name="window_sum",
    cases=STENCIL_CONTRACT.cases(),
    contract=STENCIL_CONTRACT,
    make_args=_stencil_args,
    outputs=(Output("out"),),
    reference=_stencil_reference,
    scale=_stencil_scale,
    scale_words="(the sum of the window's |a|)",
    configure=_launch,
    rtol=1e-5,
    atol=0.0,
    summary=f"at most 1 global read per element plus {2 * RADIUS} per block, 1 write per element, one "
            f"float32 tile",
    hint=f"out[i] = a[i-{RADIUS}] + ... + a[i+{RADIUS}], where elements outside 0..n-1 count as 0. In shared "
         f"memory, a[i] sits at tile[t + RADIUS]; tile[0:RADIUS] is the left halo, "
         f"tile[RADIUS + THREADS:] the right halo: a[start - RADIUS ...] and a[start + THREADS ...], where "
         f"start = blockIdx.x * THREADS. The inputs include large whole numbers (up to ±10⁶) and values from "
         f"1e-30 to 1e30: keep the tile and the sum float32.",
    more_hints=("tile = cuda.shared.array(TILE, np.float32). Thread t stores a[i] (0.0 past the end) in "
                "tile[t + RADIUS]; threads t < RADIUS also store a[i - RADIUS] in tile[t] and a[i + THREADS] "
                "in tile[t + RADIUS + THREADS] (0.0 outside 0..n-1). One cuda.syncthreads(), then, if i < n, "
                "total = np.float32(0.0) plus tile[t + k] for k in range(2 * RADIUS + 1), and out[i] = "
                "total. A bare 0.0 would make total, and the sum, float64.",),
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
)


def check_window_sum(kernel, seeds=None) -> None:
    """Check cell of the window_sum (stencil with halo) exercise."""
    check(STENCIL.with_seeds(seeds) if seeds else STENCIL, {"kernel": kernel})


# ------------------------------------------------------------------------------------------- block_scan

def _scan_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": family_values(case.inputs, n, case.seed, 3), "out": np.empty(n, np.float32)}


def _block_scans(a: np.ndarray) -> np.ndarray:
    out = np.empty_like(a)
    for start in range(0, a.size, THREADS):
        out[start: start + THREADS] = np.cumsum(a[start: start + THREADS])
    return out


def _scan_reference(case: Case, args: dict) -> dict:
    return {"out": _block_scans(args["a"].astype(np.float64))}


def _scan_scale(case: Case, args: dict) -> dict:
    return {"out": _block_scans(np.abs(args["a"].astype(np.float64)))}


BLOCK_SCAN_CONTRACT = _contract("block_scan", _tree_method(
    (
        Budgeted("global_loads", "1 per element", "Read a[i] once into shared memory."),
        Budgeted("global_stores", "1 per element", "Write out[i] once."),
    ),
    "One thread adds up many values: a thread that sums tile[0..t] itself (O(n²) work in all) or thread 0 "
    "scanning the block alone. Keep the given algorithm, 5 steps in which every thread adds the value offset "
    "places to its left, and fix only its barriers.",
    TILE_HINT.format(size="THREADS", what="thread of the block")), "block_scan")

BLOCK_SCAN = Task(
    name="block_scan",
    cases=BLOCK_SCAN_CONTRACT.cases(),
    contract=BLOCK_SCAN_CONTRACT,
    make_args=_scan_args,
    outputs=(Output("out"),),
    reference=_scan_reference,
    scale=_scan_scale,
    scale_words="(the running sum of |a| in the block)",
    configure=_launch,
    rtol=1e-5,
    atol=0.0,
    summary=f"1 global read and 1 write per element, {STEPS} parallel steps in one float32 tile",
    hint="out[i] is the sum of a[start .. i], where start = 32 * (i // 32) is the first element of i's "
         "block. The inputs include blocks of large whole numbers, of fractions and values from 1e-30 to "
         "1e30: keep the tile, and the value each step adds, float32.",
    more_hints=(f"Keep the given loop, offset = 1, 2, 4, 8, 16 ({STEPS} steps, while offset < THREADS): each "
                f"thread reads addend = tile[t - offset] (np.float32(0.0) if t < offset) into a local "
                f"variable, every thread waits at cuda.syncthreads(), then adds addend into tile[t], and "
                f"every thread waits again before the next step reads. A bare 0.0 would make the addend "
                f"float64.",),
    error_hints={
        **BARRIER_HINTS,
        "RaceError": "In one step, thread t reads tile[t - offset] while thread t - offset updates that same "
                     "slot. Read the value into a local variable, cuda.syncthreads(), then add it, then "
                     "cuda.syncthreads() again before the next step.",
        "WriteConflictError": "Two threads wrote the same element: thread t writes only its own tile[t] (and "
                              "out[i]), never a neighbour's slot.",
    },
)


def check_block_scan(kernel, seeds=None) -> None:
    """Check cell of the find-and-fix-the-race exercise (block_scan)."""
    check(BLOCK_SCAN.with_seeds(seeds) if seeds else BLOCK_SCAN, {"kernel": kernel})


def hint(name: str, level: int = 2) -> None:
    """Print hint ``level`` of a task of this notebook (level 1 is the one the check's messages show)."""
    print_hint(TASKS, name, level)


TASKS = (BLOCK_SUM, STENCIL, BLOCK_SCAN)
