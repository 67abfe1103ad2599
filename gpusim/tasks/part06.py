"""Checks for exercise notebook 06 (softmax): an online softmax in plain Python over chunks, a fused
row-softmax kernel with a shared-memory reduction (one block per row), and the same kernel with warp shuffles
(one warp per row).

The plain-Python task (no kernel) goes through ``common.run_function``, which plays the part of ``common.run``
for a function: it calls the learner's code and returns plain data; ``common.judge`` compares that with the
float64 reference, never calling learner code.
"""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, Output, Task, check, check_function, make_cases

ROW_THREADS = 64  # threads per block of row_softmax: one block per row, two warps
WARP = 32  # threads per block of warp_row_softmax: one warp per row
SENTINEL = -1.0  # written into outputs before a launch: a softmax is never negative

OVERFLOW_HINT = ("NaN or inf in the output usually means exp() overflowed (float32 exp overflows above about "
                 "88.7) or a sum was 0: subtract the (running) maximum before exponentiating.")


def stable_softmax64(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """The reference: softmax in float64, max subtracted."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_inputs(shape: tuple[int, ...], seed: int, salt: int = 0) -> np.ndarray:
    """float32 logits whose rows sit far from 0 (|x| up to several hundred): exp(x) alone overflows or
    underflows in float32, so only a max-subtracted softmax survives. Rows differ in offset and spread."""
    rng = np.random.default_rng([seed, salt])
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    offsets = rng.choice([300.0, -300.0, 120.0, 0.0, 95.0], size=(rows, 1))
    spreads = rng.choice([1.0, 8.0, 30.0], size=(rows, 1))
    x = offsets + spreads * rng.uniform(-1.0, 1.0, size=(rows, shape[-1]))
    return x.reshape(shape).astype(np.float32)


# --------------------------------------------------------------------------------------- online_softmax

def _online_args(case: Case) -> dict:
    n, chunk = case.params["n"], case.params["chunk"]
    x = softmax_inputs((n,), case.seed, 1)
    x.flags.writeable = False
    return {"x": x, "chunk": chunk}


ONLINE_SOFTMAX = Task(
    name="online_softmax",
    cases=make_cases([{"n": n, "chunk": c} for n, c in
                      ((1, 4), (5, 2), (8, 8), (10, 3), (33, 4), (100, 7), (257, 32), (1000, 64), (3, 1))]),
    make_args=_online_args,
    outputs=(Output("y", fill=None),),
    reference=lambda case, args: {"y": stable_softmax64(args["x"])},
    configure=lambda case: None,  # no launch: a plain function
    rtol=1e-5,
    atol=1e-8,
    summary="equal to a float64 softmax within rtol 1e-5, on logits up to ±330",
    hint="After the first pass, m must be max(x) and l the sum of exp(x - m) over ALL elements, the last "
         "partial chunk included. When a chunk raises the running max from m to m_new, rescale l by "
         "exp(m - m_new) before adding the chunk's exp(x - m_new). " + OVERFLOW_HINT,
)


def check_online_softmax(function, seeds=None) -> None:
    """Check cell of the online_softmax exercise: ``function(x, chunk)`` returns softmax(x)."""
    task = ONLINE_SOFTMAX.with_seeds(seeds) if seeds else ONLINE_SOFTMAX
    check_function(task, function, lambda fn, args: fn(args["x"], args["chunk"]))


# -------------------------------------------------------------------------------------- row kernels

def _rows_args(case: Case) -> dict:
    rows, cols = case.params["rows"], case.params["cols"]
    return {"x": softmax_inputs((rows, cols), case.seed, 2), "out": np.empty((rows, cols), np.float32)}


ROW_SIZES = ((1, 1), (3, 7), (2, 64), (4, 65), (5, 100), (2, 257), (1, 31))
REDUCTION_HINTS = {
    "RaceError": "A thread read a shared slot that another thread writes in the same step (or overwrote one "
                 "still being read). Put cuda.syncthreads() after every step of the tree reduction, and "
                 "after reading the final value before the slot is reused for the next reduction.",
    "BarrierError": "Every thread of the block must reach every cuda.syncthreads(): keep the barrier outside "
                    "`if tid < stride:` and do not return early.",
    "UninitializedReadError": "A thread read a shared slot nobody wrote: threads with no column (short "
                              "rows) must still write a neutral value (-inf for a max, 0 for a sum) there.",
    "OutOfBoundsError": "Loop over columns with `for j in range(tid, cols, blockDim)`: a row may be shorter "
                        "or longer than the block.",
}


def _traffic_budgets(what: str) -> tuple[Budget, ...]:
    return (
        Budget("global_loads", lambda p: 3 * p["rows"] * p["cols"], "global reads",
               "3 per element: one pass for the max, one for the sum, one for the output",
               f"Each {what} reads its columns once per pass; keep partial results in registers and shared "
               f"memory, not in global memory."),
        Budget("global_stores", lambda p: p["rows"] * p["cols"], "global writes", "1 per element",
               "Write out[row, j] once, in the last pass."),
    )


ROW_SOFTMAX = Task(
    name="row_softmax",
    cases=make_cases([{"rows": r, "cols": c} for r, c in ROW_SIZES]),
    make_args=_rows_args,
    outputs=(Output("out", fill=SENTINEL),),
    reference=lambda case, args: {"out": stable_softmax64(args["x"])},
    configure=lambda case: (case.params["rows"], ROW_THREADS),
    rtol=1e-5,
    atol=1e-8,
    budgets=_traffic_budgets("thread"),
    summary="race-free, at most 3 global reads and 1 write per element",
    hint="Block b handles row b. Thread t covers columns t, t + 64, t + 128, ... Reduce the per-thread "
         "maxima in shared memory (a tree: stride 32, 16, ..., 1, a barrier after each step), then the "
         "per-thread sums of exp(x - max) the same way, then write exp(x - max) / sum. " + OVERFLOW_HINT,
    unwritten_hint="Every column of every row must be written: loop j over range(tid, cols, blockDim.x).",
    error_hints=REDUCTION_HINTS,
)


def check_row_softmax(kernel, seeds=None) -> None:
    """Check cell of the row_softmax exercise: grid = rows, block = 64 threads, shared-memory reductions."""
    check(ROW_SOFTMAX.with_seeds(seeds) if seeds else ROW_SOFTMAX, {"kernel": kernel})


WARP_ROW_SOFTMAX = Task(
    name="warp_row_softmax",
    cases=make_cases([{"rows": r, "cols": c} for r, c in ROW_SIZES]),
    make_args=_rows_args,
    outputs=(Output("out", fill=SENTINEL),),
    reference=lambda case, args: {"out": stable_softmax64(args["x"])},
    configure=lambda case: (case.params["rows"], WARP),
    rtol=1e-5,
    atol=1e-8,
    budgets=_traffic_budgets("lane") + (
        Budget("shared_loads", lambda p: 0, "shared-memory reads", "none: the lanes of a warp exchange "
               "values through shuffles", "Use cuda.shfl_xor_sync(0xffffffff, value, offset) for offsets "
               "16, 8, 4, 2, 1 instead of shared memory."),
        Budget("barriers", lambda p: 0, "block barriers", "none: one warp needs no cuda.syncthreads()",
               "Shuffles already synchronise the 32 lanes; drop cuda.syncthreads()."),
    ),
    summary="no shared memory and no barrier, at most 3 global reads and 1 write per element",
    hint="Block b is one warp and handles row b; lane t covers columns t, t + 32, ... After the shuffle "
         "reduction EVERY lane must hold the row's max (and later its sum): shfl_xor_sync (a butterfly) "
         "gives everyone the result; shfl_down_sync leaves it in lane 0 only, so broadcast it with "
         "cuda.shfl_sync(0xffffffff, value, 0). " + OVERFLOW_HINT,
    unwritten_hint="Every column must be written: loop j over range(lane, cols, 32).",
    error_hints={"BarrierError": "All 32 lanes named in the mask 0xffffffff must reach every shuffle: keep "
                                "the shuffles outside `if j < cols:` branches.",
                 "OutOfBoundsError": REDUCTION_HINTS["OutOfBoundsError"]},
)


def check_warp_row_softmax(kernel, seeds=None) -> None:
    """Check cell of the warp_row_softmax exercise: grid = rows, block = 32 threads, shuffles only."""
    check(WARP_ROW_SOFTMAX.with_seeds(seeds) if seeds else WARP_ROW_SOFTMAX, {"kernel": kernel})


TASKS = (ONLINE_SOFTMAX, ROW_SOFTMAX, WARP_ROW_SOFTMAX)

