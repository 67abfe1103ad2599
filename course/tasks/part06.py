"""Checks for exercise notebook 06 (softmax): an online softmax in plain Python over chunks, a fused
row-softmax kernel with a shared-memory reduction (one block per row), and the same kernel with warp shuffles
(one warp per row).

The inputs are built to break the shortcuts a softmax can take and still look right on tame data: the
maximum late in the row (in the last chunk, the last lane, a middle chunk), rows whose elements all lie below
-104 (where exp underflows unless the true maximum is subtracted), spikes of 200 over a flat row (where exp
overflows unless it is), constant rows, ramps and wide rows; see :func:`softmax_rows` and
:func:`online_vector`.

Each task has a contract (:mod:`course.tasks.contract`): any number of rows and columns (of elements and
chunk sizes for the online softmax), drawn past the longest example; the families of :data:`LOGIT_FAMILIES`,
the shortcuts above and logits log-uniform in magnitude from 1e-3 to 1e6, rows entirely below -1e4 included
(where a maximum that starts at -1e4 fails); float32 storage and arithmetic. The kernels' method is every
gpusim counter against the reference solution of ``solutions/06_softmax`` on the same case: reads and writes
per element, coalescing (sectors), shared memory on both sides (one float32 slot per thread, or none for the
warp), the tree's barriers, bank conflicts, shuffles. The block sizes are the exercise's constants (64 and 32
threads), not the learner's choice.

The plain-Python task (no kernel) goes through ``common.run_function``, which plays the part of ``common.run``
for a function: it calls the learner's code and returns plain data; ``common.judge`` compares that with the
float64 reference, never calling learner code. The learner's function receives x as a
:class:`~course.tasks.chunks.ChunkedReader`, which can only be read in slices of at most ``chunk`` elements
and counts the elements read: the method (two passes, chunk by chunk) is checked from that count, and the
state kept between chunks (m and l) by a :class:`~course.tasks.chunks.StateProbe`, once per check. In
classroom grading x stays with the grader, which hands out the chunks and counts them itself; the reference
and the inputs (:func:`grader_only`) are not in the learner's process there at all.
"""

from __future__ import annotations

import numpy as np

from .chunks import ChunkedReader, ChunkReadError, StateProbe, float64_message  # noqa: F401 (notebook names)
from .common import Case, Output, Task, check, check_function, grader_only, print_hint
from .contract import EXACT, Budgeted, Contract, Family, Size, Slack, Solution, method, no_kernel
from .inputs import signed_magnitudes

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

# The contracts' families of logits: the shortcuts above, and two that cover the whole range of values
# without a gap, log-uniform in magnitude: "wide" (any centre, any spread) and "deep" (every value below
# -1e4, where a maximum that starts at -1e4, or masked entries filled with -1e4, outweigh the real ones).
WIDE_CENTRES, WIDE_SPREADS = (-3.0, 6.0), (-3.0, 3.0)  # exponents of ten
DEEP_DEPTHS, DEEP_SPREADS = (4.05, 6.0), (-2.0, 3.0)  # the largest value lies below -10**4.05 = -1.12e4
LOGIT_FAMILIES = (
    Family("shortcuts", "rows built against the shortcuts of a softmax: the maximum late in the row (the "
                        "last column, the last lane's columns, a middle chunk), rows below -104 with a "
                        "spike, spikes of 200 over a flat row, the maximum "
                        "first, constant rows, ramps, wide rows"),
    Family("wide", "each row a centre of either sign, log-uniform in magnitude from 1e-3 to 1e6, plus a "
                   "spread log-uniform from 1e-3 to 1e3"),
    Family("deep", "each row entirely below -1e4 (its largest value log-uniform from -1.1e4 to -1e6), with "
                   "a spread log-uniform from 1e-2 to 1e3: masked entries filled with -1e4, or a maximum "
                   "that starts there, outweigh every real value"),
)


def logit_row(family: str, cols: int, rng: np.random.Generator) -> np.ndarray:
    """One float64 row of logits of the "wide" or "deep" family."""
    if family == "wide":
        centre = float(signed_magnitudes(rng, 1, WIDE_CENTRES, zeros=0.0)[0])
        spread = 10.0 ** rng.uniform(*WIDE_SPREADS)
        return centre + spread * rng.uniform(-1.0, 1.0, cols)
    top = -(10.0 ** rng.uniform(*DEEP_DEPTHS))
    spread = 10.0 ** rng.uniform(*DEEP_SPREADS)
    row = top - spread * rng.uniform(0.0, 1.0, cols)
    row[rng.integers(cols)] = top
    return row


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

@grader_only
def online_logits(family: str, n: int, chunk: int, seed: int) -> np.ndarray:
    """The x of one online_softmax case: the shortcuts' vector (:func:`online_vector`, its family chosen by
    the seed), or one row of the "wide" or "deep" family."""
    if family in ("shortcuts", ""):
        return online_vector(n, chunk, seed)
    return logit_row(family, n, np.random.default_rng([seed, 62, n, chunk])).astype(np.float32)


def _online_args(case: Case) -> dict:
    n, chunk = case.params["n"], case.params["chunk"]
    x = online_logits(case.inputs, n, chunk, case.seed)
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


# The state kept between chunks is measured once per check, on a vector of STATE_N elements read in chunks
# of STATE_CHUNK: the online method keeps m and l (2 numbers) besides the chunk in hand and what one
# chunk's work makes of it; a list of every chunk's maximum and sum keeps 2·STATE_N/STATE_CHUNK = 512.
STATE_N, STATE_CHUNK = 1024, 4
KEPT_NUMBERS = 2  # m and l: the state the task allows per row


def state_budget(chunk: int) -> int:
    """Floating-point numbers a function may hold at a read besides its output: m and l, the chunk in hand
    and two arrays made from it (a difference, its exp), and six scalars (m_new, a chunk's max and sum...)."""
    return KEPT_NUMBERS + 3 * chunk + 6


def state_message(name: str, probe: StateProbe, returned: dict, what: tuple[int, str]) -> str | None:
    """Untrusted half of the method check of online_softmax (run where the learner's function runs): NumPy
    float64 values held between chunks or returned, where the task is float32; then more numbers held at
    one read than ``what`` = (limit, words) allows."""
    wide = float64_message(name, probe, returned)
    if wide:
        return wide
    limit, words = what
    if probe.most <= limit:
        return None
    return (f"{name} gives the right values, but at one of its reads it held {probe.most} numbers besides "
            f"its output ({probe.where}), {words}: the online method keeps {KEPT_NUMBERS} numbers per row "
            f"between chunks, m and l, besides the chunk in hand (at most {limit} here).\nHint: do not keep "
            f"a value per chunk (a list of every chunk's maximum or sum) to combine at the end: fold each "
            f"chunk into m and l as it arrives, rescaling l by exp(m - m_new) when the maximum grows.")


def _kept_state(function) -> str | None:
    """Run the learner's function on the state case, watching what it holds between chunks."""
    rng = np.random.default_rng([STATE_N, 63])
    x = (rng.uniform(-1.0, 1.0, STATE_N) * 10.0).astype(np.float32)
    probe = StateProbe(allowed=((STATE_N,),))
    try:
        y = probe.run(function, ChunkedReader(x, STATE_CHUNK), STATE_CHUNK)
    except Exception as exc:  # noqa: BLE001
        return f"online_softmax raised {type(exc).__name__} on a vector of {STATE_N}: {exc}"
    return state_message("online_softmax", probe, {"y": y},
                         (state_budget(STATE_CHUNK), f"reading x of n = {STATE_N} in chunks of "
                                                     f"{STATE_CHUNK}"))


ONLINE_DRAWN_N = 4200  # drawn vectors go past the longest visible one (2053) and the hidden one (4099)
ONLINE_SIZES = ((1, 4), (5, 2), (8, 8), (10, 3), (33, 4), (100, 7), (257, 32), (1000, 64), (3, 1), (129, 128),
                (2053, 64), (97, 1))
ONLINE_HIDDEN_SIZES = ((2, 1), (64, 64), (65, 64), (1031, 16), (300, 299), (4099, 128), (17, 5), (200, 9))
ONLINE_SEEDS = (0, 1, 2, 3, 4)  # the shortcut vector's family is the seed's: five seeds meet all five
NOTEBOOK = "06_softmax"

ONLINE_CONTRACT = Contract(
    name="part06.online_softmax",
    sizes=(Size("n", 1, None, ONLINE_DRAWN_N, "elements of x"),
           Size("chunk", 1, None, lambda p: p["n"] + 1, "elements a read hands out at most, n or more too")),
    inputs=LOGIT_FAMILIES,
    method=no_kernel("a plain-Python function, no kernel: the check counts the elements it reads and "
                     "measures the numbers it keeps between chunks"),
    solution=Solution(NOTEBOOK, (("function", "online_softmax"),)),
    examples=tuple({"n": n, "chunk": c, "inputs": "shortcuts"} for n, c in ONLINE_SIZES)
    + ({"n": 300, "chunk": 16, "inputs": "wide"}, {"n": 77, "chunk": 8, "inputs": "deep"}),
    hidden_examples=tuple({"n": n, "chunk": c, "inputs": "shortcuts"} for n, c in ONLINE_HIDDEN_SIZES)
    + ({"n": 513, "chunk": 32, "inputs": "wide"}, {"n": 40, "chunk": 3, "inputs": "deep"}),
    drawn=3,
)

ONLINE_HINT = ("After the first pass, m must be max(x) and l the sum of exp(x - m) over ALL elements, the "
               "last partial chunk included; the running maximum starts "
               "below every value (-inf, not 0 or -1e4). "
               + OVERFLOW_HINT)
ONLINE_RECIPE = ("m = np.float32(-np.inf) and l = np.float32(0.0). Pass 1, for each chunk c = x[start:start "
                 "+ chunk]: m_new = max(m, c.max()); l = l·exp(m - m_new) + exp(c - m_new).sum(); m = m_new. "
                 "Pass 2: y[start:start + chunk] = exp(x[start:start + chunk] - m) / l, y a float32 array. "
                 "Between chunks only m and l are kept.")
ONLINE_SOFTMAX = Task(
    name="online_softmax",
    cases=ONLINE_CONTRACT.cases(ONLINE_SEEDS),
    contract=ONLINE_CONTRACT,
    make_args=_online_args,
    outputs=(Output("y", fill=None),),
    reference=lambda case, args: {"y": stable_softmax64(args["x"])},
    configure=lambda case: None,  # no launch: a plain function
    rtol=1e-5,
    atol=1e-8,
    summary="equal to a float64 softmax within rtol 1e-5 on vectors built to overflow or underflow exp and "
            "on logits from -1e6 to 1e6, x read twice, chunk by chunk, "
            "m and l kept between chunks, in float32",
    hint=ONLINE_HINT,
    more_hints=("When a chunk raises the running max from m to m_new, rescale l by exp(m - m_new) before "
                "adding the chunk's exp(x - m_new).", ONLINE_RECIPE),
    error_hints={"ChunkReadError": "Read x only as x[start:start + chunk] (at most chunk elements), once in "
                                   "the pass that finds m and l and once in the pass that writes the output; "
                                   "keep only the two numbers m and l between chunks."},
    chunked=(("x", "chunk"),),
    reads_rule=_judge_reads,
)


def check_online_softmax(function, seeds=None) -> None:
    """Check cell of the online_softmax exercise: ``function(x, chunk)`` returns softmax(x), reading x (a
    :class:`ChunkedReader`) in two passes of chunks and keeping m and l between chunks, in float32."""
    task = ONLINE_SOFTMAX.with_seeds(seeds) if seeds else ONLINE_SOFTMAX

    def state(case, fn):
        return _kept_state(fn) if case is task.cases[-1] else None

    check_function(task, function, lambda fn, args: fn(args["x"], args["chunk"]), state)


# -------------------------------------------------------------------------------------- row kernels

def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _rows_args(lanes: int):
    def make(case: Case) -> dict:
        rows, cols = case.params["rows"], case.params["cols"]
        if case.inputs in ("shortcuts", ""):
            x = softmax_rows(rows, cols, case.seed, lanes, lanes)
        else:
            rng = np.random.default_rng([case.seed, lanes, rows, cols])
            x = np.stack([logit_row(case.inputs, cols, rng) for _ in range(rows)]).astype(np.float32)
        return {"x": x, "out": np.empty((rows, cols), np.float32)}

    return make


# (rows, cols): 1s, primes, just past the block (64) and the warp (32), rows longer than 16 or 32 columns
# per thread would fit in a local array, longer than 1024 (a shared copy of the row), 7+ rows (every
# shortcut), more rows than columns; then a wide and a deep case. Drawn: up to ROW_DRAWN_ELEMENTS elements,
# rows of up to ROW_DRAWN_COLS columns (past the longest example) and up to ROW_DRAWN_ROWS rows.
ROW_SIZES = ((1, 1), (9, 7), (7, 64), (8, 65), (3, 129), (7, 257), (2, 1031), (1, 2053), (12, 3))
ROW_HIDDEN_SIZES = ((1, 31), (5, 97), (11, 193), (13, 33), (1, 4099), (16, 1), (7, 640))
ROW_FAMILY_SIZES = (((4, 100), "wide"), ((3, 45), "deep"))
ROW_HIDDEN_FAMILY_SIZES = (((2, 300), "wide"), ((5, 20), "deep"))
ROW_DRAWN_ROWS, ROW_DRAWN_COLS, ROW_DRAWN_ELEMENTS = 12, 2200, 2200
ROW_DRAWN = 2
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
TREE_STEPS = ROW_THREADS.bit_length() - 1  # log2(64) = 6 steps in each shared-memory tree


def _row_examples(sizes, family_sizes) -> tuple[dict, ...]:
    return (tuple({"rows": r, "cols": c, "inputs": "shortcuts"} for r, c in sizes)
            + tuple({"rows": r, "cols": c, "inputs": family} for (r, c), family in family_sizes))


def _row_contract(name: str, lanes: int, row_method) -> Contract:
    return Contract(
        name=f"part06.{name}",
        sizes=(Size("rows", 1, None, ROW_DRAWN_ROWS, "rows of x: one block each"),
               Size("cols", 1, None, lambda p: min(ROW_DRAWN_COLS, ROW_DRAWN_ELEMENTS // p["rows"]),
                    f"columns of x: any number, shorter or longer than the block of {lanes} threads")),
        inputs=LOGIT_FAMILIES,
        method=row_method,
        solution=Solution(NOTEBOOK, (("kernel", name),)),
        examples=_row_examples(ROW_SIZES, ROW_FAMILY_SIZES),
        hidden_examples=_row_examples(ROW_HIDDEN_SIZES, ROW_HIDDEN_FAMILY_SIZES),
        drawn=ROW_DRAWN,
        block_sizes=f"none to choose: the check launches one block of {lanes} threads per row",
        cost=lambda p: p["rows"] * (p["cols"] + 4 * lanes),
    )


def _old_accesses(lanes: int, reduction: int):
    """The element accesses of the busiest thread the task has always allowed: 6 per column a thread owns (3
    reads and 1 write, 2 more to stage them in shared memory), plus ``reduction`` for the two reductions."""
    return lambda p: 6 * _cdiv(p["cols"], lanes) + reduction


def _above(limit):
    """A Slack up to ``limit(sizes)``, where that lies above the reference's figure."""
    return lambda counter: Slack(extra=lambda reference, p: max(0, limit(p) - int(reference[counter])),
                                 words="what the task allows")


COALESCED = ("coalesced reads and writes: thread t takes columns t, t + blockDim, t + 2·blockDim, ..., so "
             "the threads of a warp touch neighbouring columns")
COALESCED_HINT = ("Thread t must take columns t, t + blockDim, ... (j over range(t, cols, blockDim)): a "
                  "thread that takes a block of neighbouring columns of its own (cols / blockDim of them) "
                  "makes its warp read 32 columns far apart, each in a sector of its own.")


def _traffic(what: str) -> tuple[Budgeted, ...]:
    return (
        Budgeted("global_loads", lambda p: f"3 per element: one pass for the max, one for the sum, one for "
                                          f"the output, {3 * p['rows'] * p['cols']} here",
                 f"Each {what} reads its columns once per pass; keep partial results in registers and shared "
                 f"memory, not in global memory."),
        Budgeted("global_stores", "1 per element", "Write out[row, j] once, in the last pass."),
    )


def _coalescing() -> tuple[Budgeted, ...]:
    return (Budgeted("global_sectors", COALESCED, COALESCED_HINT, most=Slack(0.25, lambda r, p: 2, "2")),
            Budgeted("global_requests", COALESCED, COALESCED_HINT, most=Slack(0.25)))


def _spread(lanes: int, unit: str, reduction: int, fix: str) -> tuple[Budgeted, ...]:
    return (
        Budgeted("max_thread_accesses",
                 lambda p: f"6 per column a {unit} owns (3 reads and 1 write, 2 more to stage them in shared "
                           f"memory) plus {reduction} for its part in the two reductions: "
                           f"{_old_accesses(lanes, reduction)(p)} at most here",
                 f"One thread did far more than its share: the reduction "
                 f"(or the row) is done serially. {fix}",
                 most=_above(_old_accesses(lanes, reduction))("max_thread_accesses")),
        Budgeted("active_threads", f"every {unit} that owns a column reading it",
                 f"Spread the columns over all the {unit}s of the row: {unit} t reads columns t, t + "
                 f"{lanes}, t + {2 * lanes}, ...", most=None, least=EXACT),
    )


LAUNCHED = {"blocks": "the check launches the kernel itself, one block per row",
            "threads": "the check launches the kernel itself, a fixed number of threads per block",
            "dynamic_shared_bytes": "the launch gives none"}
TREE_FIX = ("Combine the 64 partial results with a tree: at stride 32, 16, ..., 1 thread t < stride combines "
            "scratch[t] and scratch[t + stride], a cuda.syncthreads() after each step, so each thread makes "
            "a few accesses per step.")
SHARED_WORDS = "one float32 slot per thread, 64 × 4 = 256 bytes, reused for both reductions"
SHARED_HINT = ("One cuda.shared.array(ROW_THREADS, float32) is all the reductions need: each thread writes "
               "its partial result in its own slot, and the sum reuses the slots of the maximum (after a "
               "barrier). A float64 array, a second array or a copy of the row is memory the method does not "
               "need, which limits how many blocks fit on a multiprocessor.")
TREE_WORDS = (f"at least one per step of the two trees, 2 × log2({ROW_THREADS}) = {2 * TREE_STEPS}, and no "
              f"more than a few beyond the reference's")
TREE_HINT = ("Combine the 64 partial maxima, and then the 64 partial sums, each with a tree in shared "
             "memory, a cuda.syncthreads() after each step. One thread's partial result taken for the row's "
             "skips a tree; warp shuffles followed by a slot per warp are "
             "the next exercise's method, not this one's.")
CONFLICT_HINT = ("At each step thread t < stride reads scratch[t] and scratch[t + stride]: consecutive "
                 "threads, consecutive slots, each in its own bank. Interleaved addressing "
                 "(scratch[2·stride·t]) puts the threads of a warp in a few banks, one after the other.")
EXTRA_BARRIERS = 4  # barriers per block beyond the reference's that a tree may spend (an extra sync or two)

ROW_METHOD = method(
    (
        *_traffic("thread"),
        *_spread(ROW_THREADS, "thread", 48, TREE_FIX),
        Budgeted("shared_atomics", "none: the task asks for a tree reduction",
                 "64 atomics on one shared slot are done one after another; combine the partial results "
                 "with the tree reduction instead."),
        Budgeted("max_block_barriers", TREE_WORDS, TREE_HINT,
                 most=Slack(extra=lambda r, p: EXTRA_BARRIERS, words=f"{EXTRA_BARRIERS} more"),
                 least=Slack(extra=lambda r, p: max(0, int(r["max_block_barriers"]) - 2 * TREE_STEPS),
                             words=f"down to {2 * TREE_STEPS}")),
        Budgeted("barriers", TREE_WORDS, TREE_HINT,
                 most=Slack(extra=lambda r, p: EXTRA_BARRIERS * p["rows"],
                            words=f"{EXTRA_BARRIERS} a block")),
        Budgeted("max_thread_collectives", "none: the threads combine their results through shared memory",
                 TREE_HINT),
        Budgeted("static_shared_bytes", SHARED_WORDS, SHARED_HINT, least=EXACT),
        *_coalescing(),
        Budgeted("bank_conflicts", "none: a tree with sequential addressing", CONFLICT_HINT),
        Budgeted("shared_loads", "a few per step of each tree", TREE_FIX, most=Slack(0.5)),
        Budgeted("shared_stores", "a few per step of each tree", TREE_FIX, most=Slack(0.5)),
        Budgeted("shared_requests", "a few per step of each tree", TREE_FIX, most=Slack(0.5)),
    ),
    free=LAUNCHED)

ROW_CONTRACT = _row_contract("row_softmax", ROW_THREADS, ROW_METHOD)

ROW_HINT = ("Block b handles row b. Thread t covers columns t, t + 64, t + 128, ... Reduce the per-thread "
            "maxima in shared memory (a tree), then the per-thread sums of exp(x - max) the same way, then "
            "write exp(x - max) / sum. The maximum starts below every value: -inf, not 0 or -1e4, and "
            "threads with no column contribute -inf. " + OVERFLOW_HINT)
ROW_SOFTMAX = Task(
    name="row_softmax",
    cases=ROW_CONTRACT.cases(),
    contract=ROW_CONTRACT,
    make_args=_rows_args(ROW_THREADS),
    outputs=(Output("out", fill=SENTINEL),),
    reference=lambda case, args: {"out": stable_softmax64(args["x"])},
    configure=lambda case: (case.params["rows"], ROW_THREADS),
    rtol=1e-5,
    atol=1e-8,
    summary="race-free tree reductions in 256 bytes of shared memory (no thread does more than its share), "
            "3 coalesced global reads and 1 write per element, in float32",
    hint=ROW_HINT,
    more_hints=("The tree: stride = 32, then 16, ..., 1; at each step thread t < stride sets scratch[t] to "
                "max(scratch[t], scratch[t + stride]) (or their sum), and every thread, inside the tree or "
                "not, reaches cuda.syncthreads() after it. scratch[0] then holds the row's value; read it, "
                "and wait at a barrier before the slots are reused.",),
    unwritten_hint="Every column of every row must be written: loop j over range(tid, cols, blockDim.x).",
    error_hints=REDUCTION_HINTS,
)


def check_row_softmax(kernel, seeds=None) -> None:
    """Check cell of the row_softmax exercise: grid = rows, block = 64 threads, shared-memory reductions."""
    check(ROW_SOFTMAX.with_seeds(seeds) if seeds else ROW_SOFTMAX, {"kernel": kernel})


SHUFFLES = "5 butterfly steps per reduction, and one broadcast each at most (shfl_down_sync then shfl_sync)"
WARP_METHOD = method(
    (
        *_traffic("lane"),
        Budgeted("shared_loads", "none: the lanes of a warp exchange values through shuffles",
                 "Use cuda.shfl_xor_sync(0xffffffff, value, offset) for offsets 16, 8, 4, 2, 1 instead of "
                 "shared memory."),
        Budgeted("static_shared_bytes", "none: the lanes of a warp exchange values through shuffles",
                 "Drop the cuda.shared.array: registers and shuffles are all a warp needs.", least=EXACT),
        Budgeted("barriers", "none: one warp needs no cuda.syncthreads()",
                 "Shuffles already synchronise the 32 lanes; drop cuda.syncthreads()."),
        *_spread(WARP, "lane", 8, "Every lane reads its own columns (lane, lane + 32, ...) and the butterfly "
                                  "of shfl_xor_sync combines the 32 partial results in 5 steps."),
        Budgeted("max_thread_collectives", SHUFFLES,
                 "Each reduction takes log2(32) = 5 shuffles: offsets 16, 8, 4, 2, 1.",
                 most=Slack(extra=lambda r, p: 2, words="a broadcast per reduction")),
        *_coalescing(),
    ),
    free=LAUNCHED)

WARP_CONTRACT = _row_contract("warp_row_softmax", WARP, WARP_METHOD)

WARP_ROW_SOFTMAX = Task(
    name="warp_row_softmax",
    cases=WARP_CONTRACT.cases(),
    contract=WARP_CONTRACT,
    make_args=_rows_args(WARP),
    outputs=(Output("out", fill=SENTINEL),),
    reference=lambda case, args: {"out": stable_softmax64(args["x"])},
    configure=lambda case: (case.params["rows"], WARP),
    rtol=1e-5,
    atol=1e-8,
    summary="no shared memory and no barrier, every lane doing its share, 3 coalesced global reads and 1 "
            "write per element, in float32",
    hint="Block b is one warp and handles row b; lane t covers columns t, t + 32, ... After the shuffle "
         "reduction EVERY lane must hold the row's max (and later its sum); the maximum starts below every "
         "value (-inf, not 0 or -1e4). " + OVERFLOW_HINT,
    more_hints=("shfl_xor_sync(0xffffffff, value, offset) for offset = 16, 8, 4, 2, 1 (a butterfly) gives "
                "every lane the result; shfl_down_sync leaves it in lane 0 only, so broadcast it with "
                "cuda.shfl_sync(0xffffffff, value, 0).",),
    unwritten_hint="Every column must be written: loop j over range(lane, cols, 32).",
    error_hints={"BarrierError": "All 32 lanes named in the mask 0xffffffff must reach every shuffle: keep "
                                "the shuffles outside `if j < cols:` branches.",
                 "WriteConflictError": "Two lanes wrote the same element on the same line: lane t writes "
                                       "columns t, t + 32, ... (j over range(lane, cols, 32)).",
                 "OutOfBoundsError": REDUCTION_HINTS["OutOfBoundsError"]},
)


def check_warp_row_softmax(kernel, seeds=None) -> None:
    """Check cell of the warp_row_softmax exercise: grid = rows, block = 32 threads, shuffles only."""
    check(WARP_ROW_SOFTMAX.with_seeds(seeds) if seeds else WARP_ROW_SOFTMAX, {"kernel": kernel})


def hint(name: str, level: int = 2) -> None:
    """Print hint ``level`` of a task of this notebook (level 1 is the one the check's messages show)."""
    print_hint(TASKS, name, level)


TASKS = (ONLINE_SOFTMAX, ROW_SOFTMAX, WARP_ROW_SOFTMAX)
