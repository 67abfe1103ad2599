"""Checks for exercise notebook 06 (softmax): an online softmax in plain Python over chunks, a fused
row-softmax kernel with a shared-memory reduction (one block per row), and the same kernel with warp shuffles
(one warp per row).

The inputs are built to break the shortcuts a softmax can take and still look right on tame data: the
maximum late in the row (in the last chunk, the last lane, a middle chunk), rows whose elements all lie below
-104 (where exp underflows unless the true maximum is subtracted), spikes of 200 over a flat row (where exp
overflows unless it is), constant rows, ramps and wide rows; see :func:`softmax_rows` and
:func:`online_vector`.

The plain-Python task (no kernel) goes through ``common.run_function``, which plays the part of ``common.run``
for a function: it calls the learner's code and returns plain data; ``common.judge`` compares that with the
float64 reference, never calling learner code. The learner's function receives x as a
:class:`~course.tasks.chunks.ChunkedReader`, which can only be read in slices of at most ``chunk`` elements
and counts the elements read: the method (two passes, chunk by chunk) is checked from that count. In
classroom grading x stays with the grader, which hands out the chunks and counts them itself; the reference
and the inputs (:func:`grader_only`) are not in the learner's process there at all.
"""

from __future__ import annotations

import numpy as np

from .chunks import ChunkedReader, ChunkReadError  # noqa: F401 (re-exported: the notebook's names for them)
from .common import Budget, Case, Output, Task, check, check_function, grader_only, make_cases

ROW_THREADS = 64  # threads per block of row_softmax: one block per row, two warps
WARP = 32  # threads per block of warp_row_softmax: one warp per row
SENTINEL = -1.0  # written into outputs before a launch: a softmax is never negative
SPIKE = 200.0  # a spike this far above a flat row overflows float32 exp (above 88.7) unless the max is taken
DEEP = -300.0  # rows around here underflow exp (below -103) unless their own maximum is subtracted

OVERFLOW_HINT = ("NaN or inf in the output usually means exp() overflowed (float32 exp overflows above about "
                 "88.7) or a sum was 0 (every exp underflowed, below about -103): subtract the row's true "
                 "maximum, over every element, before exponentiating.")


@grader_only
def stable_softmax64(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """The reference: softmax in float64, max subtracted."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ------------------------------------------------------------------------------------------------ inputs

ROW_FAMILIES = ("offset", "late spike", "deep with late spike", "early spike", "constant", "ramp", "wide")


def _late_position(cols: int, lanes: int, variant: int, rng) -> int:
    """A column late in the row: the last one, the last one the block's last lane reads, or one in the
    second half; so that neither the first element, nor lane 0's columns, nor the first chunk hold it."""
    if variant == 0 or cols < 2:
        return cols - 1
    if variant == 1 and cols >= lanes:
        return (cols - lanes) // lanes * lanes + lanes - 1
    return int(rng.integers(cols // 2, cols))


def _row(family: str, cols: int, lanes: int, variant: int, rng) -> np.ndarray:
    """One float64 row of the given family (see ROW_FAMILIES)."""
    if family == "offset":  # far from zero: exp alone overflows or underflows
        return rng.choice([300.0, -300.0, 120.0, 0.0, 95.0]) + rng.choice([1.0, 8.0, 30.0]) * \
            rng.uniform(-1.0, 1.0, cols)
    if family in ("late spike", "deep with late spike"):
        base, peak = (0.0, SPIKE) if family == "late spike" else (DEEP, DEEP + 190.0)
        x = base + rng.uniform(-2.0, 2.0, cols)
        x[_late_position(cols, lanes, variant, rng)] = peak
        return x
    if family == "early spike":  # the maximum in the first column: a max taken from the last chunk misses it
        x = rng.uniform(-2.0, 2.0, cols)
        x[0] = SPIKE
        return x
    if family == "constant":
        return np.full(cols, (150.0, -150.0, 0.0)[variant])
    if family == "ramp":  # rising: the running maximum changes at every element
        return np.linspace(-150.0, 150.0, cols) + rng.uniform(-0.5, 0.5, cols)
    return rng.uniform(-150.0, 150.0, cols)  # wide


def softmax_rows(rows: int, cols: int, seed: int, salt: int, lanes: int) -> np.ndarray:
    """float32 logits, each row from one of ROW_FAMILIES (seeded shuffle: 7 or more rows hold all of them)."""
    rng = np.random.default_rng([seed, salt, rows, cols])
    order = rng.permutation(len(ROW_FAMILIES))
    x = np.empty((rows, cols))
    for r in range(rows):
        x[r] = _row(ROW_FAMILIES[order[r % len(order)]], cols, lanes, int(rng.integers(3)), rng)
    return x.astype(np.float32)


VECTOR_FAMILIES = ("deep with a middle spike", "ramp", "early spike", "offset", "constant")


@grader_only
def online_vector(n: int, chunk: int, seed: int) -> np.ndarray:
    """The x of one online_softmax case; its family is VECTOR_FAMILIES[seed % 5]:

    * every element below -104 but one, in a middle chunk, 190 above the rest: a max that starts at 0, or is
      taken from the first or the last chunk only, gives 0/0 or inf;
    * a rising ramp from -200 to 200: the maximum is in the last (partial) chunk, the running max changes
      at every chunk;
    * a spike of 200 at element 0 over a flat vector: a max taken from the last chunk only overflows;
    * far from zero (±300, ±120) with a spread of up to 30; a constant ±150.
    """
    rng = np.random.default_rng([seed, 61, n, chunk])
    family = VECTOR_FAMILIES[seed % len(VECTOR_FAMILIES)]
    if family == "deep with a middle spike":
        x = DEEP + rng.uniform(-2.0, 2.0, n)
        chunks = -(-n // chunk)
        middle = chunks // 2 * chunk
        x[min(n - 1, middle + int(rng.integers(min(chunk, n - middle))))] = DEEP + 190.0
    elif family == "ramp":
        x = np.linspace(-200.0, 200.0, n) + rng.uniform(-0.5, 0.5, n)
    elif family == "early spike":
        x = rng.uniform(-2.0, 2.0, n)
        x[0] = SPIKE
    elif family == "offset":
        x = rng.choice([300.0, -300.0, 120.0, -120.0]) + rng.choice([1.0, 8.0, 30.0]) * rng.uniform(-1, 1, n)
    else:
        x = np.full(n, 150.0 if seed % 2 else -150.0)
    return x.astype(np.float32)


# --------------------------------------------------------------------------------------- online_softmax

def _online_args(case: Case) -> dict:
    n, chunk = case.params["n"], case.params["chunk"]
    x = online_vector(n, chunk, case.seed)
    x.flags.writeable = False
    return {"x": x, "chunk": chunk}


def _judge_reads(case: Case, reads: dict[str, list[int]]) -> str | None:
    """Trusted half of the method check: two passes, chunk by chunk, means 2·n elements read in all (one more
    chunk is allowed, e.g. to start m at the first chunk's maximum)."""
    n, chunk = case.params["n"], case.params["chunk"]
    total = sum(reads.get("x", ()))
    if 2 * n <= total <= 2 * n + chunk:
        return None
    if total < 2 * n:
        why = ("once at most: the check expects two passes, keeping only m and l between chunks (not the "
               "chunks themselves, nor a copy of x)")
    else:
        why = (f"{total / n:.3g} times over: the check expects two passes, one that finds m and l "
               f"together (the online update) and one that writes the output; keep each chunk you read in a "
               f"variable and use it for both the maximum and the sum")
    return (f"online_softmax gives the right values for {case.label()}, but it read {total} elements of x "
            f"(n = {n}, in chunks of at most {chunk}), which is x {why}.")


ONLINE_SIZES = ((1, 4), (5, 2), (8, 8), (10, 3), (33, 4), (100, 7), (257, 32), (1000, 64), (3, 1), (129, 128),
                (2053, 64), (97, 1))
ONLINE_SOFTMAX = Task(
    name="online_softmax",
    cases=make_cases([{"n": n, "chunk": c} for n, c in ONLINE_SIZES], seeds=(0, 1, 2, 3, 4)),
    make_args=_online_args,
    outputs=(Output("y", fill=None),),
    reference=lambda case, args: {"y": stable_softmax64(args["x"])},
    configure=lambda case: None,  # no launch: a plain function
    rtol=1e-5,
    atol=1e-8,
    summary="equal to a float64 softmax within rtol 1e-5 on vectors built to overflow or underflow exp, "
            "x read twice, chunk by chunk",
    hint="After the first pass, m must be max(x) and l the sum of exp(x - m) over ALL elements, the last "
         "partial chunk included. When a chunk raises the running max from m to m_new, rescale l by "
         "exp(m - m_new) before adding the chunk's exp(x - m_new). " + OVERFLOW_HINT,
    error_hints={"ChunkReadError": "Read x only as x[start:start + chunk] (at most chunk elements), once in "
                                   "the pass that finds m and l and once in the pass that writes the output; "
                                   "keep only the two numbers m and l between chunks."},
    hidden_sizes=tuple({"n": n, "chunk": c} for n, c in ((2, 1), (64, 64), (65, 64), (1031, 16), (300, 299),
                                                           (4099, 128), (17, 5), (200, 9))),
    chunked=(("x", "chunk"),),
    reads_rule=_judge_reads,
)


def check_online_softmax(function, seeds=None) -> None:
    """Check cell of the online_softmax exercise: ``function(x, chunk)`` returns softmax(x), reading x (a
    :class:`ChunkedReader`) in two passes of chunks."""
    task = ONLINE_SOFTMAX.with_seeds(seeds) if seeds else ONLINE_SOFTMAX
    check_function(task, function, lambda fn, args: fn(args["x"], args["chunk"]))


# -------------------------------------------------------------------------------------- row kernels

def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _rows_args(lanes: int):
    def make(case: Case) -> dict:
        rows, cols = case.params["rows"], case.params["cols"]
        return {"x": softmax_rows(rows, cols, case.seed, lanes, lanes),
                "out": np.empty((rows, cols), np.float32)}

    return make


# (rows, cols): 1s, primes, just past the block (64) and the warp (32), rows longer than 16 or 32 columns
# per thread would fit in a local array, longer than 1024 (a shared copy of the row), 7+ rows (every family),
# more rows than columns
ROW_SIZES = ((1, 1), (9, 7), (7, 64), (8, 65), (3, 129), (7, 257), (2, 1031), (1, 2053), (12, 3))
ROW_HIDDEN_SIZES = ((1, 31), (5, 97), (11, 193), (13, 33), (1, 4099), (16, 1), (7, 640))
REDUCTION_HINTS = {
    "RaceError": "A thread read a shared slot that another thread writes in the same step (or overwrote one "
                 "still being read). Put cuda.syncthreads() after every step of the tree reduction, and "
                 "after reading the final value before the slot is reused for the next reduction.",
    "WriteConflictError": "Two threads wrote the same element on the same line: check how each thread "
                          "computes the column it writes (j over range(tid, cols, blockDim)) and the shared "
                          "slot it writes (its own, scratch[tid]).",
    "BarrierError": "Every thread of the block must reach every cuda.syncthreads(): keep the barrier outside "
                    "`if tid < stride:` and do not return early.",
    "UninitializedReadError": "A thread read a shared slot nobody wrote: threads with no column (short "
                              "rows) must still write a neutral value (-inf for a max, 0 for a sum) there.",
    "OutOfBoundsError": "Loop over columns with `for j in range(tid, cols, blockDim)`, reading x directly: a "
                        "row may be shorter or longer than the block, and longer than any array of fixed "
                        "size (the check uses rows of over 2000 columns).",
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


def _work_budgets(lanes: int, reduction: int, unit: str, fix: str) -> tuple[Budget, ...]:
    """Span and spread of the work: no thread does much more than its share, every thread with a column works.
    `reduction` is the element accesses one thread makes in its two reductions."""
    return (
        Budget("max_thread_accesses", lambda p: 6 * _cdiv(p["cols"], lanes) + reduction,
               "element accesses in its busiest thread",
               f"6 per column a {unit} owns (3 reads and 1 write, 2 more if it stages its columns in shared "
               f"memory) plus {reduction} for its part in the two reductions",
               f"One thread did far more than its share: the reduction (or the row) is done serially. {fix}"),
        Budget("active_threads", lambda p: p["rows"] * min(p["cols"], lanes), "threads that read or wrote "
               "memory", f"every {unit} that owns a column reads it", "Spread the columns over all the "
               f"{unit}s of the row: {unit} t reads columns t, t + {lanes}, t + {2 * lanes}, ...",
               at_least=True),
    )


TREE_STEPS = ROW_THREADS.bit_length() - 1  # log2(64) = 6 steps in each shared-memory tree

ROW_SOFTMAX = Task(
    name="row_softmax",
    cases=make_cases([{"rows": r, "cols": c} for r, c in ROW_SIZES]),
    make_args=_rows_args(ROW_THREADS),
    outputs=(Output("out", fill=SENTINEL),),
    reference=lambda case, args: {"out": stable_softmax64(args["x"])},
    configure=lambda case: (case.params["rows"], ROW_THREADS),
    rtol=1e-5,
    atol=1e-8,
    budgets=_traffic_budgets("thread") + _work_budgets(
        ROW_THREADS, 48, "thread", "Combine the 64 partial results with a tree: at stride 32, 16, ..., 1 "
        "thread t < stride combines scratch[t] and scratch[t + stride], a cuda.syncthreads() after each "
        "step, so each thread makes a few accesses per step.") + (
        Budget("shared_atomics", lambda p: 0, "atomic updates of shared memory", "none: the task asks for a "
               "tree reduction", "64 atomics on one shared slot are done one after another; combine the "
               "partial results with the tree reduction instead."),
        Budget("max_block_barriers", lambda p: 2 * TREE_STEPS, "barriers in its busiest block",
               f"at least one per step of the two trees, 2 × log2({ROW_THREADS}) = {2 * TREE_STEPS}",
               "Combine the 64 partial maxima, and then the 64 partial sums, each with a tree in shared "
               "memory, a cuda.syncthreads() after each step. One thread's partial result taken for the "
               "row's skips a tree; warp shuffles followed by a slot per warp are the next exercise's "
               "method, not this one's.", at_least=True),
    ),
    summary="race-free tree reductions (no thread does more than its share), at most 3 global reads and 1 "
            "write per element",
    hint="Block b handles row b. Thread t covers columns t, t + 64, t + 128, ... Reduce the per-thread "
         "maxima in shared memory (a tree: stride 32, 16, ..., 1, a barrier after each step), then the "
         "per-thread sums of exp(x - max) the same way, then write exp(x - max) / sum. " + OVERFLOW_HINT,
    unwritten_hint="Every column of every row must be written: loop j over range(tid, cols, blockDim.x).",
    error_hints=REDUCTION_HINTS,
    hidden_sizes=tuple({"rows": r, "cols": c} for r, c in ROW_HIDDEN_SIZES),
)


def check_row_softmax(kernel, seeds=None) -> None:
    """Check cell of the row_softmax exercise: grid = rows, block = 64 threads, shared-memory reductions."""
    check(ROW_SOFTMAX.with_seeds(seeds) if seeds else ROW_SOFTMAX, {"kernel": kernel})


WARP_ROW_SOFTMAX = Task(
    name="warp_row_softmax",
    cases=make_cases([{"rows": r, "cols": c} for r, c in ROW_SIZES]),
    make_args=_rows_args(WARP),
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
    ) + _work_budgets(WARP, 8, "lane", "Every lane reads its own columns (lane, lane + 32, ...) and the "
                      "butterfly of shfl_xor_sync combines the 32 partial results in 5 steps."),
    summary="no shared memory and no barrier, every lane doing its share, at most 3 global reads and 1 write "
            "per element",
    hint="Block b is one warp and handles row b; lane t covers columns t, t + 32, ... After the shuffle "
         "reduction EVERY lane must hold the row's max (and later its sum): shfl_xor_sync (a butterfly) "
         "gives everyone the result; shfl_down_sync leaves it in lane 0 only, so broadcast it with "
         "cuda.shfl_sync(0xffffffff, value, 0). " + OVERFLOW_HINT,
    unwritten_hint="Every column must be written: loop j over range(lane, cols, 32).",
    error_hints={"BarrierError": "All 32 lanes named in the mask 0xffffffff must reach every shuffle: keep "
                                "the shuffles outside `if j < cols:` branches.",
                 "WriteConflictError": "Two lanes wrote the same element on the same line: lane t writes "
                                       "columns t, t + 32, ... (j over range(lane, cols, 32)).",
                 "OutOfBoundsError": REDUCTION_HINTS["OutOfBoundsError"]},
    hidden_sizes=tuple({"rows": r, "cols": c} for r, c in ROW_HIDDEN_SIZES),
)


def check_warp_row_softmax(kernel, seeds=None) -> None:
    """Check cell of the warp_row_softmax exercise: grid = rows, block = 32 threads, shuffles only."""
    check(WARP_ROW_SOFTMAX.with_seeds(seeds) if seeds else WARP_ROW_SOFTMAX, {"kernel": kernel})


TASKS = (ONLINE_SOFTMAX, ROW_SOFTMAX, WARP_ROW_SOFTMAX)
