"""Checks for exercise notebook 08 (systolic arrays and pipelines): the clock and the skewed feed of a
weight-stationary systolic array (checked cycle by cycle against course.models.systolic), its cycle count, a
double-buffered tiled matmul, and a producer/consumer ring buffer handing tiles over through flags and fences.

Each task has a contract (:mod:`course.tasks.contract`). The two plain-Python tasks draw any product and any
array shape (past the largest example) and, for the clock, values of every sign and of magnitudes from 1e-30
to 1e30; their method is the cycle-by-cycle comparison, no kernel (``contract.no_kernel``). The two kernels
are float32 in storage and arithmetic (the compile gate refuses float64) and have every gpusim counter
budgeted against the reference solution of ``solutions/08_systolic_arrays_and_pipelines`` on the same case:
the matmul's shared memory on both sides (two buffers per operand: one slot where the task asks for two
fails), its 32-byte sectors and bank conflicts; the ring's single barrier, its ring of SLOTS tiles and the
reads through it. The ring runs, in the cases that refill each slot, under gpusim's other schedules too
(each warp held back, each run ahead, a seeded random order): a protocol that only the default order lets
through fails there.
"""

from __future__ import annotations

import traceback

import numpy as np

from course.models import systolic
from gpusim import place_name

from . import part05
from .common import (
    Case,
    CheckFailed,
    CourseCodeError,
    Output,
    Task,
    _error,
    check,
    check_function,
    guard_learner,
    print_hint,
    refuse_course_code,
)
from .contract import EXACT, Budgeted, Contract, Family, Size, Slack, Solution, method, no_kernel
from .inputs import MATMUL_FAMILIES, signed_magnitudes

TILE = 16  # tile width of the double-buffered matmul; blocks of TILE x TILE threads
WARP = 32
SLOTS = 2  # buffers in the ring of exercise 4
FLAG_INTS = 16  # int32 flags the ring kernel may keep in shared memory besides the ring
FLOAT_BYTES = 4
NOTEBOOK = "08_systolic_arrays_and_pipelines"
NOT_IMPLEMENTED = ("{name}: not implemented yet. Replace `raise NotImplementedError()` in the solution cell "
                   "with your code, run that cell, then run this check again.")


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


# ------------------------------------------------------------------------------ 1. the array's clock and feed

# (m, k, n, rows, cols): products smaller than the array, as large, and larger (several passes)
ARRAY_SIZES = ((1, 1, 1, 1, 1), (1, 4, 4, 4, 4), (5, 3, 2, 4, 4), (4, 6, 5, 3, 2), (7, 9, 3, 4, 4),
               (2, 5, 11, 3, 4), (12, 8, 8, 8, 8))
ARRAY_HIDDEN = ((3, 17, 4, 4, 5), (9, 2, 7, 2, 3), (1, 7, 9, 8, 2))

STEP_HINTS = {  # register -> (what to think about, the rule): the message gives the first
    "a0": ("what enters column 0 of a row in this clock?",
           "column 0 takes the value entering its row: a_new[i, 0] = x_left[i]."),
    "a": ("an activation moves one PE to the right per clock, and every PE moves at once: build the new "
          "registers from the old ones, not in place from left to right.",
          "a_new[i, j] = a[i, j - 1], what the left neighbour held in the previous cycle (shift the whole "
          "array at once, or update into a new array)."),
    "s0": ("what does the top row add its product to? Nothing flows in from above it. A PE does not keep its "
           "own sum (that would be an output-stationary array).",
           "row 0 starts from zero: s_new[0, j] = weights[0, j] * a_new[0, j]."),
    "s": ("a partial sum flows down one PE per clock, and picks up this PE's product on the way. A PE does "
          "not keep its own sum (that would be an output-stationary array).",
          "s_new[i, j] = s[i - 1, j] + weights[i, j] * a_new[i, j]: the sum the PE above computed in the "
          "previous cycle, plus this PE's weight times the activation it receives in this cycle."),
}
FEED_NUDGE = ("the skew: row i starts i cycles after row 0, and only rows that have a column of X (this "
              "pass's slice) and a vector in flight receive anything.")
FEED_HINT = ("row i receives X[cycle - i, i] when 0 <= cycle - i < M (M = X.shape[0], the number of vectors) "
             "and i < X.shape[1] (the columns of this pass's slice of X); every other row receives 0.")
SYSTOLIC_MORE = "tasks.hint('systolic_step', 2) gives the rules."


ARRAY_KEYS = ("m", "k", "n", "rows", "cols")
ARRAY_FAMILIES = (
    Family("fractions", "X and W uniform in [-2, 2] to 3 decimals, every 7th element of X 0 (a zero input is "
                        "still an input)"),
    Family("wide", "X and W of random signs, magnitudes log-uniform from 1e-30 to 1e30, a tenth of them 0"),
    Family("negative", "every element of X and W negative, magnitudes log-uniform from 1e-3 to 1e3"),
)
# Drawn products: each dimension up to just past the largest example's, the array up to 9 x 9, and at most
# ARRAY_DRAWN_PASSES weight tiles a side (every clock is three Python calls).
ARRAY_DRAWN = {"m": 14, "k": 18, "n": 13, "rows": 9, "cols": 9}
ARRAY_DRAWN_PASSES = 3


def _array_cycles(p: dict) -> int:
    return systolic.cycle_count(p["m"], p["k"], p["n"], p["rows"], p["cols"])


SYSTOLIC_CONTRACT = Contract(
    name="part08.systolic",
    sizes=(Size("rows", 1, None, ARRAY_DRAWN["rows"], "rows of PEs in the array"),
           Size("cols", 1, None, ARRAY_DRAWN["cols"], "columns of PEs in the array"),
           Size("m", 1, None, ARRAY_DRAWN["m"], "vectors streamed through (rows of X)"),
           Size("k", 1, None, lambda p: min(ARRAY_DRAWN["k"], ARRAY_DRAWN_PASSES * p["rows"]),
                "the shared dimension (rows of W)"),
           Size("n", 1, None, lambda p: min(ARRAY_DRAWN["n"], ARRAY_DRAWN_PASSES * p["cols"]),
                "columns of W")),
    inputs=ARRAY_FAMILIES,
    method=no_kernel("plain Python, no kernel: every register of every clock and every fed value is "
                     "compared with the model's"),
    solution=Solution(NOTEBOOK, (("step", "systolic_step"), ("feed", "skewed_feed"))),
    examples=tuple(dict(zip(ARRAY_KEYS, size, strict=True)) for size in ARRAY_SIZES),  # families in turn
    hidden_examples=tuple(dict(zip(ARRAY_KEYS, size, strict=True)) for size in ARRAY_HIDDEN),
    drawn=3,
    cost=_array_cycles,
    block_sizes="no kernel: any array of rows x cols PEs",
)


def _array_inputs(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """X (m x k) and W (k x n) of the case's family."""
    p = case.params
    rng = np.random.default_rng([case.seed, 8])
    if case.inputs == "wide":
        return signed_magnitudes(rng, (p["m"], p["k"]), (-30.0, 30.0)), \
            signed_magnitudes(rng, (p["k"], p["n"]), (-30.0, 30.0))
    if case.inputs == "negative":
        return (-np.abs(signed_magnitudes(rng, (p["m"], p["k"]), (-3.0, 3.0), zeros=0.0)),
                -np.abs(signed_magnitudes(rng, (p["k"], p["n"]), (-3.0, 3.0), zeros=0.0)))
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
    cases=SYSTOLIC_CONTRACT.cases(),
    contract=SYSTOLIC_CONTRACT,
    make_args=_array_args,
    outputs=(Output("fed", fill=None), Output("a", fill=None), Output("s", fill=None)),
    reference=_array_reference,
    configure=lambda case: None,
    rtol=1e-9,
    atol=1e-12,
    hint="`fed[c, i]` is what skewed_feed gives row i in cycle c (counting the cycles of all passes in a "
         "row); `a[c, i, j]` and `s[c, i, j]` are PE (i, j)'s registers after systolic_step's clock in cycle "
         "c, given the model's registers of cycle c - 1. skewed_feed: " + FEED_NUDGE,
    more_hints=(" ".join(["skewed_feed: " + FEED_HINT] + [rule for _, rule in STEP_HINTS.values()]),),
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
                    f"are {np.round(expected_x, 3)}.\nHint: {FEED_NUDGE} {SYSTOLIC_MORE}")
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
                        f"= {np.round(expected_x, 3)}).\nHint: {STEP_HINTS[key][0]} {SYSTOLIC_MORE}")
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


def _cycle_reference(case: Case, args: dict) -> dict:
    p = case.params
    return {"cycles": np.array([systolic.cycle_count(p["m"], p["k"], p["n"], p["rows"], p["cols"])])}


CYCLE_DRAWN_SIDE, CYCLE_DRAWN_ARRAY = 10_000, 1024  # drawn products past 4096³, arrays past 256 x 256
CYCLES_CONTRACT = Contract(
    name="part08.systolic_cycles",
    sizes=(Size("m", 1, None, CYCLE_DRAWN_SIDE, "vectors streamed through (rows of X)"),
           Size("k", 1, None, CYCLE_DRAWN_SIDE, "the shared dimension (rows of W)"),
           Size("n", 1, None, CYCLE_DRAWN_SIDE, "columns of W"),
           Size("rows", 1, None, CYCLE_DRAWN_ARRAY, "rows of PEs in the array"),
           Size("cols", 1, None, CYCLE_DRAWN_ARRAY, "columns of PEs in the array")),
    inputs=(Family("sizes", "the five sizes are the whole input"),),
    method=no_kernel("plain Python, no kernel: the count is compared exactly with the model's"),
    solution=Solution(NOTEBOOK, (("function", "systolic_cycles"),)),
    examples=tuple(dict(zip(ARRAY_KEYS, size, strict=True)) for size in CYCLE_SIZES),
    hidden_examples=tuple(dict(zip(ARRAY_KEYS, size, strict=True)) for size in CYCLE_HIDDEN),
    drawn=6,
    cost=lambda p: 1,
    block_sizes="no kernel: any array of rows x cols PEs",
)
SYSTOLIC_CYCLES = Task(
    name="systolic_cycles",
    cases=CYCLES_CONTRACT.cases(),
    contract=CYCLES_CONTRACT,
    make_args=lambda case: dict(case.params),
    outputs=(Output("cycles", fill=None),),
    reference=_cycle_reference,
    configure=lambda case: None,
    exact=True,
    hint=CYCLE_NUDGE,
    more_hints=(CYCLE_DERIVATION,),
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
        got, message = _call(function, task.name, *(p[key] for key in ARRAY_KEYS))
        if message is None and got != systolic.cycle_count(*(p[key] for key in ARRAY_KEYS)):
            wrong.append((p, got))
    if not wrong:
        return ""
    slip = _cycle_diagnosis(*wrong[0])  # the case the message reports: a slip elsewhere may be a coincidence
    if slip:
        return slip
    wrong = [p for p, _ in wrong]
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
MATMUL_HIDDEN = ((40, 100, 3), (1, 65, 17))
MATMUL_DRAWN = 2  # cases drawn per set of seeds, each within Part 5's cost of a drawn case (K up to 1024)
BUFFERS = 2  # the task's two buffers per operand


def barrier_budget(k: int) -> int:
    """Barriers a block may go through: one before the loop over tiles, one per tile."""
    return _cdiv(k, TILE) + 1


BUFFERS_HINT = ("Declare sA and sB as cuda.shared.array((2, TILE, TILE), float32): two buffers per operand, "
                "so that step t reads buffer t % 2 while the tiles of step t + 1 go into the other. One "
                "buffer per operand is Part 5's kernel, which needs a second barrier per step; float64 "
                "tiles or all of K staged at once hold more than the method needs.")
BARRIERS_HINT = ("Two buffers per operand let one barrier per tile do the work of Part 5's two: in step t, "
                 "load tile t + 1 into buffer (t + 1) % 2 while multiplying buffer t % 2, then one "
                 "cuda.syncthreads().")
LOAD_ONCE_HINT = ("Load each tile once, into the buffer the next step reads: tile 0 before the loop, tile "
                  "t + 1 in step t only while t + 1 < cdiv(K, 16). A step that loads one tile too many "
                  "reads and stores a tile no step uses.")


MATMUL_DERIVATION = (
    "Where the budgets come from. The reads are Part 5's: each in-range element of a block's rows of a and "
    "columns of b once, cdiv(N,T)·M·K + cdiv(M,T)·K·N. With one buffer, a step needs a barrier after the "
    "load (the tile is complete) and one after the products (nobody reads it any more) before the next load "
    "may overwrite it. With two, step t loads into buffer (t + 1) % 2, which nobody reads in step t, and the "
    "one barrier at its end does both jobs: cdiv(K, 16) barriers, plus one after tile 0. The price is the "
    "memory: 2 · 2 · 16 · 16 · 4 = 4096 bytes a block.")


def _matmul_method():
    def reads(p: dict) -> str:
        return (f"each in-range element of a and b loaded once per block: cdiv(N,T)·M·K + cdiv(M,T)·K·N = "
                f"{part05.tiled_read_budget(p['m'], p['k'], p['n'], TILE)} here")

    return method(
        (
            Budgeted("max_block_barriers", lambda p: f"one before the loop and one per tile: cdiv(K, 16) + 1 "
                                                     f"= {barrier_budget(p['k'])} here", BARRIERS_HINT),
            Budgeted("static_shared_bytes",
                     f"two buffers of a {TILE} × {TILE} float32 tile per operand: "
                     f"{2 * BUFFERS * TILE * TILE * FLOAT_BYTES} bytes (a padding column per tile at most)",
                     BUFFERS_HINT,
                     most=Slack(extra=lambda reference, p: 2 * BUFFERS * TILE * FLOAT_BYTES,
                                words="one padding column per tile"),
                     least=EXACT),
            Budgeted("global_loads", reads, part05.READS_HINT),
            Budgeted("global_stores", "1 per element of c", part05.STORES_HINT),
            Budgeted("shared_stores", "each tile stored once: 2 · 256 per block and tile step",
                     LOAD_ONCE_HINT),
            Budgeted("max_thread_accesses", "per tile step 2 global reads, 2 shared writes and 32 shared "
                                            "reads, then 1 write of c", LOAD_ONCE_HINT),
            Budgeted("global_sectors", part05.COALESCED, part05.COALESCED_HINT,
                     most=Slack(0.25, lambda reference, p: 2, "2")),
            Budgeted("global_requests", part05.COALESCED, part05.COALESCED_HINT, most=Slack(0.25)),
            Budgeted("bank_conflicts", part05.CONFLICTS, part05.CONFLICTS_HINT,
                     most=Slack(extra=lambda reference, p: reference["shared_stores"] // 16,
                                words="2 per 32 shared writes, what a padding column costs")),
            Budgeted("shared_requests", part05.CONFLICTS, part05.CONFLICTS_HINT, most=Slack(0.25)),
            Budgeted("active_threads", "every thread of a block storing its elements of both tiles", "",
                     most=None, least=EXACT),
        ),
        free={"blocks": "the check launches the kernel itself, one block per tile of c",
              "threads": "the check launches the kernel itself, 16 × 16 threads a block",
              "dynamic_shared_bytes": "the check launches with none"})


MATMUL_CONTRACT = Contract(
    name="part08.matmul_double_buffered",
    sizes=part05._sizes(TILE),
    inputs=MATMUL_FAMILIES,
    method=_matmul_method(),
    solution=Solution(NOTEBOOK, (("kernel", "matmul_double_buffered"),)),
    examples=tuple({"m": m, "k": k, "n": n} for m, k, n in MATMUL_SIZES),
    hidden_examples=tuple({"m": m, "k": k, "n": n} for m, k, n in MATMUL_HIDDEN),
    drawn=MATMUL_DRAWN,
    cost=lambda p: part05.case_cost(p, TILE),
    block_sizes="16 × 16 threads (TILE), fixed by the task",
)


def _buffers(task: Task, case: Case, result: dict, facts: dict) -> str | None:
    """Diagnosis: the shared memory is half, 1.5 times or a multiple of the two buffers per operand."""
    if facts.get("counter") != "static_shared_bytes":
        return None
    ratio = facts["used"] / facts["reference"]["static_shared_bytes"]
    if ratio <= 0.55:
        return ("half the reference's shared memory: one buffer per operand, where the task asks for two "
                "(the tiles of step t + 1 cannot be loaded while step t reads its own).")
    if 1.4 < ratio < 2.2:
        return "float64 tiles (8 bytes an element) in one operand or both, where the task asks for float32."
    if ratio >= 2.2:
        return (f"{ratio:.0f}× the reference's shared memory: more than two tile steps of a and b held at "
                f"once.")
    return None


DOUBLE_BUFFERED = Task(
    name="matmul_double_buffered",
    cases=MATMUL_CONTRACT.cases(),
    contract=MATMUL_CONTRACT,
    make_args=part05._args,
    outputs=(Output("c"),),
    reference=part05._reference,
    scale=part05._scale,
    scale_words="(|a| @ |b|)",
    configure=lambda case: ((_cdiv(case.params["n"], TILE), _cdiv(case.params["m"], TILE)), (TILE, TILE)),
    rtol=1e-4,
    atol=0.0,
    summary="two buffers per operand, one barrier per tile (cdiv(K,16) + 1 per block), the tiled read "
            "budget, and the sectors and bank conflicts of the reference solution",
    hint="Double buffering: while the block multiplies the tiles of one step, the tiles of the next step go "
         "into a second buffer, so one barrier per step is enough. The tiles and the sum are float32; "
         "elements outside the matrices are 0.0 in the tiles.",
    more_hints=("Step t multiplies the tiles in buffer t % 2 (sA[t % 2, ty, j] * sB[t % 2, j, tx] for j < "
                "16), while the tiles of step t + 1 go into buffer (t + 1) % 2; tile 0 is loaded into "
                "buffer 0 before the loop, and one cuda.syncthreads() ends each step.", MATMUL_DERIVATION),
    diagnoses=(part05._early_stop(TILE), part05._tile_layout, _buffers),
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
)


def check_double_buffered_matmul(kernel, seeds=None) -> None:
    """Check cell of exercise 3: 16 x 16 tiles in two buffers, one barrier per tile."""
    check(DOUBLE_BUFFERED.with_seeds(seeds) if seeds else DOUBLE_BUFFERED, {"kernel": kernel})


# ----------------------------------------------------------------------------------- 4. the ring buffer

RING_SIZES = ((1, 1), (2, 31), (3, 32), (3, 33), (2, 64), (2, 100), (2, 250))  # (rows, length)
RING_HIDDEN = ((2, 513), (4, 65), (1, 97))
RING_INPUTS = ("mixed", "negative", "mixed", "wide", "wide", "mixed", "negative")  # of the visible examples
RING_FLAG_BYTES = FLAG_INTS * 4  # int32 flags the ring kernel may keep in shared memory besides the ring
RING_BYTES = SLOTS * WARP * FLOAT_BYTES
RING_DRAWN_ROWS, RING_DRAWN_LENGTH = 2, 300  # drawn cases: rows past the visible examples' longest
# Cases whose rows refill every slot at least once (more than SLOTS tiles) and are short enough run again
# under gpusim's other schedules: each warp held back, each run ahead, and a seeded random order.
RING_SCHEDULED_TILES = (SLOTS + 1, 2 * SLOTS)
RING_SCHEDULED_ROWS = 2
RING_FAMILIES = (
    Family("mixed", "rows of four kinds in turn: the maximum last, in the last (partial) tile; every value "
                    "negative; zeros with ±3e30; a constant row"),
    Family("wide", "signs at random, magnitudes log-uniform from 1e-30 to 1e30, a tenth of them 0"),
    Family("negative", "every value negative; each row's magnitudes log-uniform within one decade, which "
                       "lies anywhere from 1e-30 to 3e38"),
)


def ring_scheduled(case: Case) -> bool:
    """Does this case run under gpusim's other schedules too (its rows refill every slot)?"""
    low, high = RING_SCHEDULED_TILES
    return low <= _cdiv(case.params["length"], WARP) <= high and case.params["rows"] <= RING_SCHEDULED_ROWS


def _ring_args(case: Case) -> dict:
    """x (rows x length) of the case's family."""
    p = case.params
    rows, length = p["rows"], p["length"]
    rng = np.random.default_rng([case.seed, 9])
    if case.inputs == "wide":
        x = signed_magnitudes(rng, (rows, length), (-30.0, 30.0))
    elif case.inputs == "negative":  # each row within one decade, anywhere from 1e-30 to 3e38
        low = rng.uniform(-30.0, 37.5, (rows, 1))
        x = -(10.0 ** (low + rng.uniform(0.0, 1.0, (rows, length))))
    else:
        x = _mixed_rows(rng, rows, length, case.seed)
    return {"x": x.astype(np.float32), "out": np.empty(rows, np.float32)}


def _mixed_rows(rng: np.random.Generator, rows: int, length: int, seed: int) -> np.ndarray:
    """Rows that break shortcuts: the max in the last (partial) tile, all negative, zeros, huge magnitudes,
    a constant row."""
    x = rng.uniform(-1.0, 1.0, (rows, length))
    for r in range(rows):
        kind = (r + seed) % 4
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
    return x


def _ring_reference(case: Case, args: dict) -> dict:
    return {"out": args["x"].max(axis=1).astype(np.float64)}


PROTOCOL_HINT = ("Replace the barriers around each tile by the flag protocol: the producer waits on "
                 "empty[s], fills the slot, fences, adds to full[s]; the consumer waits on full[s], fences, "
                 "reads, fences, adds to empty[s].")
POLLS = ("polls of the flags, each wait polled as the reference solution does (once per tile under the "
         "default schedule)")
POLLS_HINT = ("Poll a flag with one cuda.atomic.add(flag, s, 0) per turn of the wait loop, and update it "
              "with one cuda.atomic.add(flag, s, 1) per lane and tile: no other atomics, no extra reads.")


def _ring_method():
    return method(
        (
            Budgeted("max_block_barriers", "one, after the flags are set to zero: the tiles are handed over "
                                           "through the flags", PROTOCOL_HINT),
            Budgeted("active_threads", "both warps of every block: warp 0 produces, warp 1 consumes",
                     "Warp 0 (threads 0-31) copies the tiles into the ring; warp 1 (threads 32-63) reads "
                     "them from the ring and keeps the running maximum.", most=None, least=EXACT),
            Budgeted("global_loads", "each element of x once, by the producer",
                     "Only the producer reads x; the consumer reads the tiles from the ring in shared "
                     "memory."),
            Budgeted("shared_loads", "every element of x read back from the ring by the consumer, padding "
                                     "included",
                     "The consumer takes its values from the ring (ring[s, lane]), not from x.", least=EXACT),
            Budgeted("static_shared_bytes",
                     f"the ring of SLOTS x 32 float32 ({RING_BYTES} bytes) and at most {FLAG_INTS} int32 "
                     f"flags",
                     "Keep exactly SLOTS tiles of 32 float32 in shared memory, reused round after round, and "
                     f"a few int32 flags (at most {FLAG_INTS}).",
                     most=Slack(extra=lambda reference, p: RING_BYTES + RING_FLAG_BYTES
                                - reference["static_shared_bytes"], words=f"up to {FLAG_INTS} int32 flags"),
                     least=Slack(extra=lambda reference, p: reference["static_shared_bytes"] - RING_BYTES,
                                 words="its flags")),
            Budgeted("global_stores", "one per row, by lane 0 of the consumer",
                     "Reduce the consumer's 32 running maxima with warp shuffles, then lane 0 writes "
                     "out[row]."),
            Budgeted("shared_stores", "every tile stored once into the ring, and the flags zeroed once",
                     "The producer fills slot k % SLOTS once per tile k < cdiv(length, 32), and no more.",
                     most=Slack(extra=lambda reference, p: p["rows"] * FLAG_INTS,
                                words=f"{FLAG_INTS} flags zeroed per block")),
            Budgeted("shared_atomics", POLLS, POLLS_HINT, most=Slack(1.0, words="as many again")),
            Budgeted("shared_requests", POLLS, POLLS_HINT, most=Slack(1.0, words="as many again")),
            Budgeted("max_thread_accesses", POLLS, POLLS_HINT, most=Slack(1.0, words="as many again")),
        ),
        free={"blocks": "the check launches the kernel itself, one block per row",
              "threads": "the check launches the kernel itself, 2 warps a block",
              "dynamic_shared_bytes": "the check launches with none"})


RING_CONTRACT = Contract(
    name="part08.ring_row_max",
    sizes=(Size("rows", 1, None, RING_DRAWN_ROWS, "rows of x, one block each"),
           Size("length", 1, None, RING_DRAWN_LENGTH, "elements in a row: cdiv(length, 32) tiles")),
    inputs=RING_FAMILIES,
    method=_ring_method(),
    solution=Solution(NOTEBOOK, (("kernel", "ring_row_max"),)),
    examples=tuple({"rows": r, "length": n, "inputs": family}
                   for (r, n), family in zip(RING_SIZES, RING_INPUTS, strict=True)),
    hidden_examples=tuple({"rows": r, "length": n, "inputs": family}
                          for (r, n), family in zip(RING_HIDDEN, ("mixed", "wide", "negative"), strict=True)),
    drawn=2,
    block_sizes="2 warps (64 threads), fixed by the task: warp 0 produces, warp 1 consumes",
)


RING_ROW_MAX = Task(
    name="ring_row_max",
    cases=RING_CONTRACT.cases(),
    contract=RING_CONTRACT,
    make_args=_ring_args,
    outputs=(Output("out"),),
    reference=_ring_reference,
    configure=lambda case: (case.params["rows"], 2 * WARP),
    exact=True,
    summary="through a ring of 2 tiles with flags and fences: 1 barrier per block, each element read once "
            "from global and once from the ring",
    hint="The maximum of a row is over its elements only: what does the running maximum start from, and what "
         "does the padding of a last, partial tile hold? A row may be all negative, or hold values near "
         "-3e38; its maximum may sit in the last tile. The ring and the maximum are float32.",
    more_hints=("Start the running max at float32(-math.inf), not 0 or a large negative number, and give the "
                "padding of a last, partial tile float32(-math.inf) (or skip it), not 0.0.",
                "The protocol, for tile k in slot s = k % SLOTS, round r = k // SLOTS: the producer polls "
                "empty[s] until it reaches 32·r, fences, writes ring[s, lane], fences, adds 1 to full[s]; "
                "the consumer polls full[s] until it reaches 32·(r + 1), fences, reads ring[s, lane], "
                "fences, adds 1 to empty[s]. Then 5 shfl_xor_sync steps reduce the 32 maxima and lane 0 "
                "writes out[row]."),
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
    schedules=ring_scheduled,
)


def check_ring_row_max(kernel, seeds=None) -> None:
    """Check cell of exercise 4: the row maximum through a ring of SLOTS shared tiles, warp 0 producing and
    warp 1 consuming, handed over through flags."""
    check(RING_ROW_MAX.with_seeds(seeds) if seeds else RING_ROW_MAX, {"kernel": kernel})


TASKS = (SYSTOLIC, SYSTOLIC_CYCLES, DOUBLE_BUFFERED, RING_ROW_MAX)
HINT_ALIASES = {"systolic_step": SYSTOLIC.name, "skewed_feed": SYSTOLIC.name}


def hint(name: str, level: int = 2) -> None:
    """Print hint ``level`` of a task of this notebook (level 1 is the one the check's messages show; the
    clock's task is known as systolic_step or skewed_feed too)."""
    print_hint(TASKS, HINT_ALIASES.get(name, name), level)
