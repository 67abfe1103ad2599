"""Checks for exercise notebook 08 (systolic arrays and pipelines): the clock and the skewed feed of a
weight-stationary systolic array (checked cycle by cycle against course.models.systolic), its cycle count, a
double-buffered tiled matmul under a barrier budget, and a producer/consumer ring buffer handing tiles over
through flags and fences.
"""

from __future__ import annotations

import traceback

import numpy as np

from course.models import systolic
from gpusim import place_name

from . import part05
from .common import (
    Budget,
    Case,
    CheckFailed,
    CourseCodeError,
    Output,
    Task,
    _error,
    check,
    check_function,
    guard_learner,
    make_cases,
    refuse_course_code,
)

TILE = 16  # tile width of the double-buffered matmul; blocks of TILE x TILE threads
WARP = 32
SLOTS = 2  # buffers in the ring of exercise 4
FLAG_INTS = 16  # int32 flags the ring kernel may keep in shared memory besides the ring
FLOAT_BYTES = 4
NOT_IMPLEMENTED = ("{name}: not implemented yet. Replace `raise NotImplementedError()` in the solution cell "
                   "with your code, run that cell, then run this check again.")


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


# ------------------------------------------------------------------------------ 1. the array's clock and feed

# (m, k, n, rows, cols): products smaller than the array, as large, and larger (several passes)
ARRAY_SIZES = ((1, 1, 1, 1, 1), (1, 4, 4, 4, 4), (5, 3, 2, 4, 4), (4, 6, 5, 3, 2), (7, 9, 3, 4, 4),
               (2, 5, 11, 3, 4), (12, 8, 8, 8, 8))
ARRAY_HIDDEN = ((3, 17, 4, 4, 5), (9, 2, 7, 2, 3), (1, 7, 9, 8, 2))

STEP_HINTS = {
    "a0": "column 0 takes the value entering its row: a_new[i, 0] = x_left[i].",
    "a": "an activation moves one PE to the right per clock: a_new[i, j] = a[i, j - 1], what the left "
         "neighbour held in the previous cycle. Build the new registers from the old ones (shift the whole "
         "array at once, or update into a new array): an in-place loop from left to right carries a value "
         "across the whole row in one clock.",
    "s0": "row 0 starts from zero: s_new[0, j] = weights[0, j] * a_new[0, j].",
    "s": "s_new[i, j] = s[i - 1, j] + weights[i, j] * a_new[i, j]: the sum the PE above computed in the "
         "previous cycle, plus this PE's weight times the activation it receives in this cycle. A PE does "
         "not keep its own sum (that would be an output-stationary array).",
}
FEED_HINT = ("row i receives X[cycle - i, i] when 0 <= cycle - i < M (M = X.shape[0], the number of vectors) "
             "and i < X.shape[1] (the columns of this pass's slice of X); every other row receives 0.")


def _array_inputs(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """X (m x k) and W (k x n): fractions of both signs, and a zero in X (a zero input is still an input)."""
    p = case.params
    rng = np.random.default_rng([case.seed, 8])
    X = rng.uniform(-2.0, 2.0, (p["m"], p["k"])).round(3)
    X.flat[::7] = 0.0
    W = rng.uniform(-2.0, 2.0, (p["k"], p["n"])).round(3)
    return X, W


def _array_args(case: Case) -> dict:
    X, W = _array_inputs(case)
    return {"X": X, "W": W, "rows": case.params["rows"], "cols": case.params["cols"]}


def _passes(X, W, rows, cols):
    """(slice of X, zero-padded weight tile, description) for every pass of X @ W on the array."""
    for k0 in range(0, W.shape[0], rows):
        for n0 in range(0, W.shape[1], cols):
            tile = np.zeros((rows, cols))
            block = W[k0:k0 + rows, n0:n0 + cols]
            tile[: block.shape[0], : block.shape[1]] = block
            what = f"the pass over W[{k0}:{k0 + block.shape[0]}, {n0}:{n0 + block.shape[1]}]"
            yield X[:, k0:k0 + rows], tile, what


def _histories(step, feed, args: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What `feed` gives in every cycle of every pass, and what `step` makes of the model's registers and feed
    in that cycle: (cycles, rows), (cycles, rows, cols) and (cycles, rows, cols). Driving `step` with the
    model's registers checks each clock on its own, so one wrong cycle shows where it is."""
    rows, cols = args["rows"], args["cols"]
    fed, a_out, s_out = [], [], []
    for X, tile, _ in _passes(args["X"], args["W"], rows, cols):
        a, s = np.zeros((rows, cols)), np.zeros((rows, cols))
        for cycle in range(systolic.pass_cycles(X.shape[0], rows, cols)):
            fed.append(np.asarray(feed(X.copy(), cycle, rows), dtype=np.float64))
            x_left = systolic.feed(X, cycle, rows)
            a_new, s_new = step(tile.copy(), a.copy(), s.copy(), x_left.copy())
            a_out.append(np.asarray(a_new, dtype=np.float64))
            s_out.append(np.asarray(s_new, dtype=np.float64))
            a, s = systolic.step(tile, a, s, x_left)
    return np.array(fed), np.array(a_out), np.array(s_out)


def _array_reference(case: Case, args: dict) -> dict:
    fed, a, s = _histories(systolic.step, systolic.feed, args)
    return {"fed": fed, "a": a, "s": s}


SYSTOLIC = Task(
    name="systolic_step and skewed_feed",
    cases=make_cases([dict(zip(("m", "k", "n", "rows", "cols"), s, strict=True)) for s in ARRAY_SIZES]),
    make_args=_array_args,
    outputs=(Output("fed", fill=None), Output("a", fill=None), Output("s", fill=None)),
    reference=_array_reference,
    configure=lambda case: None,
    rtol=1e-9,
    atol=1e-12,
    hint="`fed[c, i]` is what skewed_feed gives row i in cycle c (counting the cycles of all passes in a "
         "row); `a[c, i, j]` and `s[c, i, j]` are PE (i, j)'s registers after systolic_step's clock in cycle "
         "c, "
         "given the model's registers of cycle c - 1. " + FEED_HINT,
    hidden_sizes=tuple(dict(zip(("m", "k", "n", "rows", "cols"), s, strict=True)) for s in ARRAY_HIDDEN),
)


def _call(function, name: str, *args):
    """(value, None) or (None, message) for one call of learner code."""
    try:
        return function(*args), None
    except Exception as exc:  # noqa: BLE001 (every learner mistake becomes a message)
        if isinstance(exc, CourseCodeError):
            return None, str(exc)
        if _error(exc)["type"] == "NotImplementedError":
            return None, NOT_IMPLEMENTED.format(name=name)
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/gpusim/" not in f.filename]
        where = f" at {place_name(frames[-1].filename, frames[-1].lineno)}" if frames else ""
        return None, f"{name} raised {type(exc).__name__}{where}: {exc}"


def _registers(value, shape, name: str, what: str):
    """The learner's register arrays as float64 of the right shape, or a message."""
    if not isinstance(value, tuple) or len(value) != 2:
        return None, f"{name} should return the pair (a_new, s_new), not {type(value).__name__}."
    arrays = []
    for array, register in zip(value, ("a_new", "s_new"), strict=True):
        array = np.asarray(array, dtype=np.float64)
        if array.shape != shape:
            return None, f"{name} returned {register} of shape {array.shape}; the array is {shape} ({what})."
        arrays.append(array)
    return arrays, None


def _first_difference(got: np.ndarray, expected: np.ndarray) -> tuple[int, ...] | None:
    wrong = ~np.isclose(got, expected, rtol=1e-9, atol=1e-12)
    return tuple(int(i) for i in np.argwhere(wrong)[0]) if wrong.any() else None


def _check_pass(step, feed, X, tile, where: str) -> str | None:
    """Clock one pass with the learner's feed and step beside the model's; the first difference, or None."""
    rows, cols = tile.shape
    a = np.zeros((rows, cols))
    s = np.zeros((rows, cols))
    for cycle in range(systolic.pass_cycles(X.shape[0], rows, cols)):
        expected_x = systolic.feed(X, cycle, rows)
        got_x, message = _call(feed, "skewed_feed", X.copy(), cycle, rows)
        if message:
            return message
        got_x = np.asarray(got_x, dtype=np.float64)
        if got_x.shape != expected_x.shape or not np.allclose(got_x, expected_x, rtol=0, atol=0):
            return (f"skewed_feed(X, cycle={cycle}, rows={rows}) for {where} returned {np.round(got_x, 3)}; "
                    f"the values entering the array's rows in that cycle "
                    f"are {np.round(expected_x, 3)}.\nHint: {FEED_HINT}")
        a_new, s_new = systolic.step(tile, a, s, expected_x)
        value, message = _call(step, "systolic_step", tile.copy(), a.copy(), s.copy(), expected_x.copy())
        if message:
            return message
        got, message = _registers(value, (rows, cols), "systolic_step", f"{rows} rows of {cols} PEs")
        if message:
            return message
        for register, mine, theirs in (("a", got[0], a_new), ("s", got[1], s_new)):
            at = _first_difference(mine, theirs)
            if at is not None:
                i, j = at
                name = "activation" if register == "a" else "partial sum"
                key = register + ("0" if (j if register == "a" else i) == 0 else "")
                return (f"systolic_step is wrong in cycle {cycle} of {where}: PE ({i}, {j}) should hold "
                        f"the {name} {theirs[i, j]:.6g}, yours holds {mine[i, j]:.6g} (given the registers "
                        f"of the previous cycle and x_left "
                        f"= {np.round(expected_x, 3)}).\nHint: {STEP_HINTS[key]}")
        a, s = a_new, s_new
    return None


def _first_wrong_clock(step, feed, task: Task) -> str | None:
    """The detailed message for the first wrong register or feed value, pass by pass and cycle by cycle."""
    for case in task.cases:
        args = _array_args(case)
        for X, tile, what in _passes(args["X"], args["W"], args["rows"], args["cols"]):
            where = f"{what} ({case.label()}, a {args['rows']}x{args['cols']} array)"
            message = _check_pass(step, feed, X, tile, where)
            if message:
                return message
    return None


def check_systolic(step, feed, seeds=None) -> None:
    """Check cell of exercise 1: skewed_feed's values and every register systolic_step computes, in every
    cycle of every pass, on products smaller and larger than the array."""
    for function, name in ((step, "systolic_step"), (feed, "skewed_feed")):
        if not callable(function):
            raise CheckFailed(f"{name}: pass your function itself, not {type(function).__name__}.")
    task = SYSTOLIC.with_seeds(seeds) if seeds else SYSTOLIC
    refuse_course_code(feed, "skewed_feed")
    feed = guard_learner(feed, "skewed_feed")
    try:
        check_function(task, step, lambda function, args: _histories(function, feed, args))
    except CheckFailed as failure:
        raise CheckFailed(_first_wrong_clock(step, feed, task) or str(failure)) from None


# ------------------------------------------------------------------------------------- 2. the cycle count

CYCLE_SIZES = ((1, 1, 1, 1, 1), (1, 4, 4, 4, 4), (6, 4, 4, 4, 4), (5, 3, 2, 4, 4), (5, 7, 3, 4, 4),
               (9, 4, 10, 3, 4), (2, 13, 11, 5, 4), (16, 8, 8, 2, 8), (1000, 256, 256, 256, 256),
               (64, 64, 64, 256, 256), (4096, 4096, 4096, 256, 256), (1794, 1794, 1794, 256, 256),
               (8, 4096, 4096, 256, 256), (4096, 64, 4096, 256, 256), (300, 513, 100, 128, 256),
               (7, 256, 257, 256, 128))
CYCLE_HIDDEN = ((3, 1, 1, 1, 1), (2048, 300, 17, 64, 32), (1, 1000, 1000, 1, 1000), (100, 129, 511, 128, 256))
CYCLE_NUDGE = ("count one pass first: vector m enters row i in cycle m + i, and the pass ends when the last "
               "vector's sum leaves the bottom of the last column; then count how many weight tiles (passes) "
               "the product needs. The lesson's cell that clocks the model prints both for several shapes.")
CYCLE_DERIVATION = (
    "One pass: vector m enters row i in cycle m + i and meets column j's partial sum at PE (i, j) in cycle "
    "m + i + j; the last vector (m = M - 1) leaves the bottom row R - 1 of the last column C - 1 at the end "
    "of cycle M - 1 + R - 1 + C - 1, so a pass lasts M + R + C - 2 cycles (cycles count from 0). The weight "
    "matrix W (K x N) is cut into tiles of R x C, a partial tile at the edges included: cdiv(K, R) · "
    "cdiv(N, C) passes, each streaming all M vectors, one after another in this model. So systolic_cycles = "
    "cdiv(K, R) · cdiv(N, C) · (M + R + C - 2), with cdiv(a, b) = (a + b - 1) // b.")
HINT_LEVELS = "tasks.hint(\"{task}\", 2) shows the whole derivation."


def _cycle_reference(case: Case, args: dict) -> dict:
    p = case.params
    return {"cycles": np.array([systolic.cycle_count(p["m"], p["k"], p["n"], p["rows"], p["cols"])])}


SYSTOLIC_CYCLES = Task(
    name="systolic_cycles",
    cases=make_cases([dict(zip(("m", "k", "n", "rows", "cols"), s, strict=True)) for s in CYCLE_SIZES]),
    make_args=lambda case: dict(case.params),
    outputs=(Output("cycles", fill=None),),
    reference=_cycle_reference,
    configure=lambda case: None,
    exact=True,
    hint=CYCLE_NUDGE + " (" + HINT_LEVELS.format(task="systolic_cycles") + ")",
    hidden_sizes=tuple(dict(zip(("m", "k", "n", "rows", "cols"), s, strict=True)) for s in CYCLE_HIDDEN),
)


def _cycle_diagnosis(p: dict, got: float) -> str:
    """Which usual slip gives the learner's number, as a sentence (or "")."""
    m, k, n, rows, cols = (p[x] for x in ("m", "k", "n", "rows", "cols"))
    passes = _cdiv(k, rows) * _cdiv(n, cols)
    slips = (
        (passes * (m + rows + cols - 3), "each pass one cycle short: the last sum leaves at the end of cycle "
                                         "M + rows + cols - 3, counting from cycle 0, so a pass has one "
                                         "cycle more"),
        (m + rows + cols - 2, "one pass only: a product larger than the array needs cdiv(K, rows) · "
                              "cdiv(N, cols) passes"),
        ((k // rows) * (n // cols) * (m + rows + cols - 2),
         "passes counted with //: a last, partial weight tile is a pass too (round up)"),
        (passes * (m + k + n - 2), "the problem's K and N where the array's rows and cols belong: every pass "
                                   "clocks the whole array"),
        (passes * m, "no fill and no drain: the array needs rows + cols - 2 cycles beyond one per vector"),
    )
    right = systolic.cycle_count(m, k, n, rows, cols)
    for value, slip in slips:
        if got == value != right:
            return f"\nYour number is what you get with {slip}."
    return ""


def _cycle_slip(function, task: Task) -> str:
    """A targeted diagnosis of the learner's count: which usual slip gives its number, or whether it goes
    wrong already in one pass or only when the product needs several (or "")."""
    wrong = []
    for case in task.cases:
        p = case.params
        got, message = _call(function, task.name, *p.values())
        if message is None and got != systolic.cycle_count(*p.values()):
            slip = _cycle_diagnosis(p, got)
            if slip:
                return slip
            wrong.append(p)
    if not wrong:
        return ""
    one_pass = [p for p in wrong if systolic.passes(p["k"], p["n"], p["rows"], p["cols"]) == 1]
    p = (one_pass or wrong)[0]
    shape = f"M = {p['m']}, K = {p['k']}, N = {p['n']} on {p['rows']} x {p['cols']}"
    if one_pass:
        return (f"\nYour count is wrong already where the product fits the array in one pass ({shape}): when "
                f"does the sum of the last vector leave the array?")
    count = systolic.passes(p["k"], p["n"], p["rows"], p["cols"])
    return (f"\nYour count is right wherever the product fits the array in one pass, and wrong for {shape}, "
            f"which needs {count} passes: how many weight tiles does W cut into, and what does each cost?")


def _as_vector(value):
    """The learner's number as a 1-element array (a 0-d one does not survive the grader's wire), None kept.
    A count of cycles is an integer: a float (from `/` or math.ceil on a quotient) is refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"systolic_cycles should return an integer count of cycles, not "
                        f"{type(value).__name__} {value!r}: use // and integer arithmetic "
                        f"(cdiv(a, b) = (a + b - 1) // b), not / or float().")
    return np.array([value], dtype=np.float64)


def check_systolic_cycles(function, seeds=None) -> None:
    """Check cell of exercise 2: systolic_cycles(m, k, n, rows, cols), shapes from 1x1 to 4096³ on 256x256."""
    task = SYSTOLIC_CYCLES.with_seeds(seeds) if seeds else SYSTOLIC_CYCLES
    try:
        check_function(task, function, lambda f, args: _as_vector(f(*args.values())))
    except CheckFailed as failure:
        raise CheckFailed(str(failure) + _cycle_slip(function, task)) from None


# ------------------------------------------------------------------------------ 3. double-buffered matmul

MATMUL_SIZES = ((1, 1, 1), (5, 40, 7), (16, 16, 16), (17, 50, 9), (33, 18, 40), (12, 70, 21), (20, 33, 35))
MATMUL_HIDDEN = ({"m": 40, "k": 100, "n": 3}, {"m": 1, "k": 65, "n": 17})


def barrier_budget(k: int) -> int:
    """Barriers a block may go through: one before the loop over tiles, one per tile."""
    return _cdiv(k, TILE) + 1


DOUBLE_BUFFERED = Task(
    name="matmul_double_buffered",
    cases=make_cases([{"m": m, "k": k, "n": n} for m, k, n in MATMUL_SIZES]),
    make_args=part05._args,
    outputs=(Output("c"),),
    reference=part05._reference,
    configure=lambda case: ((_cdiv(case.params["n"], TILE), _cdiv(case.params["m"], TILE)), (TILE, TILE)),
    rtol=1e-4,
    atol=1e-5,
    budgets=(
        Budget("max_block_barriers", lambda p: barrier_budget(p["k"]), "barriers in one block",
               "one before the loop and one per tile: cdiv(K, 16) + 1",
               "Two buffers per operand let one barrier per tile do the work of Part 5's two: in step t, "
               "load tile t + 1 into buffer (t + 1) % 2 while multiplying buffer t % 2, then one "
               "cuda.syncthreads()."),
        Budget("global_loads", lambda p: part05.tiled_read_budget(p["m"], p["k"], p["n"], TILE), "global "
                                                                                                 "reads",
               "each in-range element of a and b loaded once per block: cdiv(N,T)·M·K + cdiv(M,T)·K·N",
               "Each thread loads ONE element of the a tile and ONE of the b tile per step into shared "
               "memory (0.0 outside the matrices, without reading); the products read only shared memory."),
        Budget("global_stores", lambda p: p["m"] * p["n"], "global writes", "1 per element of c",
               "Accumulate in a local variable and write c[row, col] once, after the loop."),
    ),
    summary="with one barrier per tile (cdiv(K,16) + 1 per block) and the tiled read budget",
    hint="Step t multiplies the tiles in buffer t % 2 (sA[t % 2, ty, j] * sB[t % 2, j, tx] for j < 16), "
         "while the tiles of step t + 1 go into buffer (t + 1) % 2; tile 0 is loaded into buffer 0 before "
         "the loop. Elements outside the matrices are 0.0 in the tiles.",
    unwritten_hint="Every thread with row < m and col < n must write c[row, col].",
    error_hints={
        "RaceError": "With two buffers, the barrier at the end of step t must stay: it makes tile t + 1 "
                     "complete before step t + 1 reads it, and keeps step t + 1 from refilling buffer t % 2 "
                     "while a slow thread still reads it. Check also that each step reads one buffer and "
                     "fills the OTHER.",
        "UninitializedReadError": "Every thread stores into both tiles at every step, 0.0 where the element "
                                  "is outside the matrix; and tile 0 is loaded into buffer 0 before the "
                                  "loop.",
        "OutOfBoundsError": "Guard every global load: row < m and k0 + tx < k for a, k0 + ty < k and col < n "
                            "for b; and the final store: row < m and col < n.",
        "BarrierError": "Every thread reaches every cuda.syncthreads(): no early return, no barrier inside "
                        "`if row < m and col < n`.",
    },
    hidden_sizes=MATMUL_HIDDEN,
)


def check_double_buffered_matmul(kernel, seeds=None) -> None:
    """Check cell of exercise 3: 16 x 16 tiles in two buffers, one barrier per tile."""
    check(DOUBLE_BUFFERED.with_seeds(seeds) if seeds else DOUBLE_BUFFERED, {"kernel": kernel})


# ----------------------------------------------------------------------------------- 4. the ring buffer

RING_SIZES = ((1, 1), (2, 31), (3, 32), (3, 33), (2, 64), (3, 100), (2, 250))  # (rows, length)
RING_HIDDEN = ({"rows": 2, "length": 513}, {"rows": 4, "length": 65}, {"rows": 1, "length": 97})
RING_SHARED_BYTES = SLOTS * WARP * FLOAT_BYTES + FLAG_INTS * 4
RING_SCHEDULED_LENGTH = 100  # rows of 4 tiles, each slot filled twice: run under gpusim's other schedules too


def _ring_args(case: Case) -> dict:
    """Rows that break shortcuts: the max in the last (partial) tile, all negative, zeros, huge magnitudes,
    a constant row."""
    p = case.params
    rows, length = p["rows"], p["length"]
    rng = np.random.default_rng([case.seed, 9])
    x = rng.uniform(-1.0, 1.0, (rows, length))
    for r in range(rows):
        kind = (r + case.seed) % 4
        if kind == 0:
            x[r, -1] = 2.0  # the maximum arrives last, in the last tile
        elif kind == 1:
            x[r] = -rng.uniform(1.0, 5.0, length)  # every value negative
        elif kind == 2:
            x[r, ::3] = 0.0
            x[r, length // 2] = 3e30
            x[r, 0] = -3e30
        else:
            x[r] = -0.5  # constant
    return {"x": x.astype(np.float32), "out": np.empty(rows, np.float32)}


def _ring_reference(case: Case, args: dict) -> dict:
    return {"out": args["x"].max(axis=1).astype(np.float64)}


RING_ROW_MAX = Task(
    name="ring_row_max",
    cases=make_cases([{"rows": r, "length": n} for r, n in RING_SIZES]),
    make_args=_ring_args,
    outputs=(Output("out"),),
    reference=_ring_reference,
    configure=lambda case: (case.params["rows"], 2 * WARP),
    exact=True,
    budgets=(
        Budget("max_block_barriers", lambda p: 1, "barriers in one block",
               "one, after the flags are set to zero: the tiles are handed over through the flags",
               "Replace the barriers around each tile by the flag protocol: the producer waits on empty[s], "
               "fills the slot, fences, adds to full[s]; the consumer waits on full[s], fences, reads, "
               "fences, adds to empty[s]."),
        Budget("active_threads", lambda p: 2 * WARP * p["rows"], "threads that touch memory",
               "both warps of every block: warp 0 produces, warp 1 consumes", at_least=True,
               hint="Warp 0 (threads 0-31) copies the tiles into the ring; warp 1 (threads 32-63) reads them "
                    "from the ring and keeps the running maximum."),
        Budget("global_loads", lambda p: p["rows"] * p["length"], "global reads",
               "each element of x once, by the producer",
               "Only the producer reads x; the consumer reads the tiles from the ring in shared memory."),
        Budget("shared_loads", lambda p: p["rows"] * p["length"], "shared reads",
               "every element of x read back from the ring by the consumer", at_least=True,
               hint="The consumer takes its values from the ring (ring[s, lane]), not from x."),
        Budget("static_shared_bytes", lambda p: RING_SHARED_BYTES, "bytes of shared memory per block",
               f"the ring of SLOTS x 32 floats and at most {FLAG_INTS} int32 flags: {RING_SHARED_BYTES}",
               "Keep only SLOTS tiles in shared memory: the ring is reused round after round."),
        Budget("global_stores", lambda p: p["rows"], "global writes", "one per row, by lane 0 of the "
                                                                      "consumer",
               "Reduce the consumer's 32 running maxima with warp shuffles, then lane 0 writes out[row]."),
    ),
    summary="through a ring of 2 tiles with flags and fences: 1 barrier per block, each element read once "
            "from global and once from the ring",
    hint="The maximum of a row is over its elements only: start the running max at -inf "
         "(float32(-math.inf)), not 0, and give the padding of a last, partial tile -inf (or skip it), not "
         "0.0. A row may be all negative; its maximum may sit in the last tile.",
    unwritten_hint="Lane 0 of the consumer warp writes out[row] once, after the last tile and the shuffles.",
    error_hints={
        "FlagRaceError": "The protocol, for tile k in slot s = k % SLOTS, round r = k // SLOTS: the producer "
                         "polls empty[s] until it reaches 32·r, fences, writes ring[s, lane], fences, adds 1 "
                         "to full[s]; the consumer polls full[s] until it reaches 32·(r + 1), fences, reads "
                         "ring[s, lane], fences, adds 1 to empty[s].",
        "DeadlockError": "Each side must wait for a count the other side will reach: the consumer for 32·(r "
                         "+ 1) on full[s] (tile k is the (r + 1)-th fill of slot s), the producer for 32·r "
                         "on empty[s]; and the consumer must add to empty[s] after each tile, or the "
                         "producer waits forever.",
        "RaceError": "Nothing orders the two warps but the flags: every handover needs a poll with an atomic "
                     "and a cuda.threadfence_block() on both sides, and flags are read and updated with "
                     "cuda.atomic.* only.",
        "KernelTimeoutError": "A loop that waits for the other warp must poll with an atomic "
                              "(cuda.atomic.add(full, s, 0)): a plain read never sees the other warp's "
                              "update.",
        "BarrierError": "Both warps reach the one cuda.syncthreads() after the flags are zeroed, and no "
                        "other.",
    },
    hidden_sizes=RING_HIDDEN,
    schedules=lambda case: case.params["length"] == RING_SCHEDULED_LENGTH,
)


def check_ring_row_max(kernel, seeds=None) -> None:
    """Check cell of exercise 4: the row maximum through a ring of SLOTS shared tiles, warp 0 producing and
    warp 1 consuming, handed over through flags."""
    check(RING_ROW_MAX.with_seeds(seeds) if seeds else RING_ROW_MAX, {"kernel": kernel})


TASKS = (SYSTOLIC, SYSTOLIC_CYCLES, DOUBLE_BUFFERED, RING_ROW_MAX)
HINTS = {"systolic_cycles": (CYCLE_NUDGE, CYCLE_DERIVATION)}


def hint(task: str, level: int = 1) -> None:
    """Print exercise `task`'s hint: level 1 says where to look (the check's message gives it too, with a
    diagnosis of your answer), level 2 gives the whole derivation."""
    if task not in HINTS or level not in (1, 2):
        raise CheckFailed(f"hint(task, level): task one of {', '.join(map(repr, HINTS))}, level 1 (where to "
                          f"look) or 2 (the derivation); not {task!r}, {level!r}.")
    print(HINTS[task][level - 1])
