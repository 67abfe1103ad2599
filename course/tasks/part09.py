"""Checks for exercise notebook 09 (languages and many GPUs): two Triton kernels run under Triton's
interpreter (a masked vector operation and a fused row softmax), the ring-attention step that folds one K/V
block into a running (max, sum, output), and the striped layout that balances causal ring attention.

The Triton kernels run through :mod:`course.tasks.tritonwatch` (every load and store bounds-checked and
counted, on tensors with NaN margins and, for the softmax, rows padded like a slice of a wider matrix) and
:mod:`course.tasks.tritongate` (Triton's own compiler front end must accept them). All four tasks are plain
calls for :func:`common.check_function`: the call returns the outputs, ``common.judge`` compares them with a
float64 (or exact) reference, and a further check per case reads the counts and the compiler's verdict.

Each task has a contract (:mod:`course.tasks.contract`): any n and any power-of-two BLOCK for the vector
operation (drawn up to BLOCK = 4096, past the 64 and 128 of the examples), any rows, columns (BLOCK up to
8192) and row padding for the softmax, any n, p, d and both layouts for the ring step, any n and p for the
stripes; input families that cover every sign and magnitude, and rows whose values or visible scores all lie
below -1e4 (a padding or mask filled with -1e4 instead of -inf, or a maximum that starts there, outweighs
them). None of the four runs under gpusim, so their methods are judged by Triton's watch and the layout's
work (``contract.no_kernel``), not by gpusim's counters.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from .common import Case, CheckFailed, Output, Task, check_function, print_hint
from .contract import Contract, Family, Size, Solution, no_kernel
from .inputs import signed_magnitudes

VECTOR_BLOCKS = (64, 128)  # BLOCK values of the visible examples of scaled_add_kernel
NOTEBOOK = "09_languages_and_many_gpus"
TRITON_MAX_BLOCK = 1 << 20  # Triton's largest tensor (TRITON_MAX_TENSOR_NUMEL)
POWERS_OF_TWO = tuple(1 << e for e in range(21))
SENTINEL = -1.0  # written into softmax outputs before the launch: a softmax is never negative
# Written into scaled_add's output before the launch: exact in float32, and no family draws it, so that an
# element still holding it is reported as never written, by that name.
VECTOR_SENTINEL = 12345.0
TRITON_MISSING = ("Triton is not installed here, so this exercise cannot run. It has wheels for Linux on "
                  "x86-64 (`make lab` installs it there); on other systems read the solution, or run the "
                  "notebook on a Linux machine.")
MASK_HINT = ("Lanes past the end must be switched off: compute offsets = pid * BLOCK + tl.arange(0, BLOCK), "
             "mask = offsets < n, and pass mask= to every tl.load and tl.store.")


def _triton():
    try:
        import triton
    except ImportError:
        raise CheckFailed(TRITON_MISSING) from None
    return triton


def _parameters_as(kernel, task_name: str, expected: tuple[str, ...]) -> None:
    function = getattr(kernel, "fn", kernel)
    if not hasattr(kernel, "fn") and not hasattr(kernel, "run"):
        raise TypeError(f"{task_name} must be a @triton.jit kernel")
    names = tuple(inspect.signature(function).parameters)
    if len(names) != len(expected) or names[-1] != expected[-1]:
        raise TypeError(f"{task_name} must take ({', '.join(expected)}) as the cell declares it, not "
                        f"({', '.join(names)}): the check launches it with those arguments.")


class _Runs:
    """What the last run of a Triton task left for its further check: the counts of gpusim's watch."""

    def __init__(self):
        self.counts = {}


def _gate(task: Task, kernel, signature: dict, constants: list[dict]) -> str | None:
    from . import tritongate

    try:
        tritongate.compile_check(kernel, signature, constants)
    except tritongate.TritonCompileError as error:
        return f"{task.name}: {error}"
    return None


def _budget(task: Task, case: Case, used: int, limit: int, what: str, rule: str, hint: str) -> str | None:
    if used <= limit:
        return None
    return (f"{task.name} computes the right values for {case.label()}, but it used {used} {what}; the "
            f"budget is {limit} ({rule}).\nHint: {hint}")


# ------------------------------------------------------------------------------------ scaled_add_kernel

VECTOR_PARAMETERS = ("x_ptr", "y_ptr", "out_ptr", "n", "alpha", "BLOCK")


VECTOR_FAMILIES = (
    Family("uniform", "x and y uniform in [-10, 10], alpha one of 2.5, -0.75, 3"),
    Family("wide", "x and y of random signs, magnitudes log-uniform from 1e-15 to 1e15, a tenth of them 0; "
                   "alpha of either sign, from 1e-3 to 1e3"),
    Family("negative", "x, y and alpha all negative, magnitudes log-uniform from 1e-15 to 1e15 (alpha 1e-3 "
                       "to 1e3)"),
)


def _vector_args(case: Case) -> dict:
    rng = np.random.default_rng([case.seed, 1])
    n = case.params["n"]
    if case.inputs in ("wide", "negative"):
        x, y = signed_magnitudes(rng, n), signed_magnitudes(rng, n)
        alpha = float(rng.choice((-1.0, 1.0)) * 10.0 ** rng.uniform(-3, 3))
        if case.inputs == "negative":
            x, y, alpha = -np.abs(x), -np.abs(y), -abs(alpha)
    else:
        x, y = rng.uniform(-10, 10, n), rng.uniform(-10, 10, n)
        alpha = float(rng.choice([2.5, -0.75, 3.0]))
    return {"x": x.astype(np.float32), "y": y.astype(np.float32), "alpha": alpha,
            "block": case.params["block"]}


VECTOR_SIZES = [(1, 64), (5, 128), (63, 64), (64, 64), (65, 64), (127, 128), (128, 128), (129, 128),
                (1000, 64), (1000, 128), (700, 256)]
VECTOR_HIDDEN = [(3001, 128), (2, 64)]
VECTOR_DRAWN_N, VECTOR_DRAWN_BLOCK, VECTOR_DRAWN_PROGRAMS = 5000, 4096, 16
SCALED_ADD_CONTRACT = Contract(
    name="part09.scaled_add_kernel",
    sizes=(Size("block", 1, TRITON_MAX_BLOCK, VECTOR_DRAWN_BLOCK, "BLOCK, the tile of one program: any power "
                                                                   "of two", choices=POWERS_OF_TWO),
           Size("n", 1, None, lambda p: min(VECTOR_DRAWN_N, VECTOR_DRAWN_PROGRAMS * p["block"]),
                "elements; cdiv(n, BLOCK) programs")),
    inputs=VECTOR_FAMILIES,
    method=no_kernel("a Triton kernel, run under Triton's interpreter, not gpusim: the check counts its "
                     "loads and stores through the watch and asks Triton's compiler"),
    solution=Solution(NOTEBOOK, (("kernel", "scaled_add_kernel"),)),
    examples=tuple({"n": n, "block": b} for n, b in VECTOR_SIZES),
    hidden_examples=tuple({"n": n, "block": b} for n, b in VECTOR_HIDDEN),
    drawn=3,
    block_sizes="any power of two BLOCK (one program of BLOCK lanes per tile), up to Triton's 2**20",
)
SCALED_ADD = Task(
    name="scaled_add_kernel",
    cases=SCALED_ADD_CONTRACT.cases(),
    contract=SCALED_ADD_CONTRACT,
    make_args=_vector_args,
    outputs=(Output("out", fill=VECTOR_SENTINEL),),
    reference=lambda case, args: {"out": args["alpha"] * args["x"].astype(np.float64) + args["y"]},
    scale=lambda case, args: {"out": np.abs(args["alpha"] * args["x"].astype(np.float64))
                              + np.abs(args["y"].astype(np.float64))},
    scale_words="(|alpha·x| + |y|)",
    configure=lambda case: None,  # the check launches the kernel itself
    rtol=1e-6,
    atol=0.0,
    summary="every access inside the arrays, one tl.load per input per program, each element loaded and "
            "stored once, for any power-of-two BLOCK",
    hint="out[i] = alpha * x[i] + y[i]: each program handles one tile of BLOCK consecutive elements, BLOCK "
         "being whatever the launch passes.",
    more_hints=("Program pid covers offsets pid * BLOCK + tl.arange(0, BLOCK); mask = offsets < n switches "
                "off the lanes past the end; pass mask= to both tl.load calls and to tl.store.",),
    unwritten_hint="The grid has cdiv(n, BLOCK) programs; program pid must write all of its BLOCK offsets "
                   "below n: offsets = pid * BLOCK + tl.arange(0, BLOCK), with BLOCK the parameter.",
    error_hints={"OutOfBoundsAccess": MASK_HINT,
                 "TypeError": "Keep the kernel's parameters as the cell gives them."},
)


def _run_scaled_add(runs: _Runs):
    def call(kernel, args):
        from . import tritonwatch as watch

        triton = _triton()
        _parameters_as(kernel, SCALED_ADD.name, VECTOR_PARAMETERS)
        n, block = len(args["x"]), args["block"]
        out = watch.guarded(np.full(n, VECTOR_SENTINEL, np.float32))
        arrays = {"x": watch.guarded(args["x"]), "y": watch.guarded(args["y"]), "out": out, "n": n,
                  "alpha": args["alpha"]}
        runs.counts = watch.run(kernel, (triton.cdiv(n, block),), arrays, {"BLOCK": block})
        return out.numpy()

    return call


def try_scaled_add(kernel, x, y, alpha: float, block: int) -> np.ndarray:
    """For a "Try it" cell: out = alpha * x + y by your kernel, on guarded copies of x and y, every access
    watched (a load past the end is an OutOfBoundsAccess here, not a crash of the notebook's kernel)."""
    from . import tritonwatch as watch

    triton = _triton()
    x = np.asarray(x, dtype=np.float32)
    out = watch.guarded(np.full(len(x), np.nan, np.float32))
    arrays = {"x": watch.guarded(x), "y": watch.guarded(np.asarray(y, dtype=np.float32)), "out": out,
              "n": len(x), "alpha": float(alpha)}
    watch.run(kernel, (triton.cdiv(len(x), block),), arrays, {"BLOCK": block})
    return out.numpy()


def check_scaled_add(kernel, seeds=None) -> None:
    """Check cell: out = alpha * x + y, launched as kernel[(cdiv(n, BLOCK),)](x, y, out, n, alpha,
    BLOCK=BLOCK) with BLOCK = 64 or 128 and drawn powers of two up to 4096."""
    _triton()
    task = SCALED_ADD.with_seeds(seeds) if seeds else SCALED_ADD
    runs = _Runs()

    def further(case, kernel):
        if case is task.cases[0]:
            blocks = sorted({c.params["block"] for c in task.cases})
            message = _gate(task, kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                           "alpha": "fp32"}, [{"BLOCK": b} for b in blocks])
            if message:
                return message
        counts, n = runs.counts, case.params["n"]
        return (_budget(task, case, counts.stored["out"], n, "element stores to out", "each element once",
                        "the programs' tiles overlap: program pid must cover pid * BLOCK ... pid * BLOCK + "
                        "BLOCK - 1, with BLOCK the parameter (the check launches it with any power of two).")
                or _budget(task, case, counts.max_program_load_calls, 2, "tl.load calls in one program",
                        "one for the x tile and one for the y tile",
                        "load the whole tile with one tl.load(x_ptr + offsets, mask=mask): a loop of "
                        "scalar loads is the one-thread-per-element way of thinking, not Triton's.")
                or _budget(task, case, counts.loaded["x"] + counts.loaded["y"], 2 * n,
                           "elements loaded", "each element of x and y once",
                           "load each tile once and reuse the values."))

    check_function(task, kernel, _run_scaled_add(runs), further)


# -------------------------------------------------------------------------------------- softmax_kernel

SOFTMAX_PARAMETERS = ("x_ptr", "out_ptr", "n_cols", "x_row_stride", "out_row_stride", "BLOCK")


def softmax_inputs(rows: int, cols: int, seed: int) -> np.ndarray:
    """float32 logits far from 0 (|x| up to ~330): exp(x) overflows or underflows without the max shift.
    Row 0 holds its maximum in its last column; one row is constant."""
    rng = np.random.default_rng([seed, 9])
    offsets = rng.choice([300.0, -300.0, 120.0, 0.0, 95.0], size=(rows, 1))
    spreads = rng.choice([1.0, 8.0, 30.0], size=(rows, 1))
    x = offsets + spreads * rng.uniform(-1.0, 1.0, size=(rows, cols))
    x[0, -1] = x[0].max() + 5.0
    if rows > 2:
        x[rows // 2] = offsets[rows // 2]
    return x.astype(np.float32)


SOFTMAX_FAMILIES = (
    Family("shifted", "rows offset by ±300, 120, 95 or 0, spread by 1, 8 or 30 (exp overflows or underflows "
                      "without the max shift); row 0's maximum in its last column, one row constant"),
    Family("wide", "logits of random signs, magnitudes log-uniform from 1e-3 to 3e3, a tenth of them 0"),
    Family("deep", "every logit below -1e4: each row offset log-uniformly from -1.1e4 to -1e6, spread by 1, "
                   "8 or 30 (a padding lane filled with -1e4 instead of -inf outweighs them all)"),
)
DEEP_DEPTHS = (4.05, 6.0)  # exponents of ten: a deep row's offset lies between -1.12e4 and -1e6


def _softmax_family(family: str, rows: int, cols: int, seed: int) -> np.ndarray:
    """float32 logits of one of SOFTMAX_FAMILIES."""
    if family == "shifted":
        return softmax_inputs(rows, cols, seed)
    rng = np.random.default_rng([seed, 9, 1])
    if family == "wide":
        return signed_magnitudes(rng, (rows, cols), (-3.0, 3.5)).astype(np.float32)
    offsets = -(10.0 ** rng.uniform(*DEEP_DEPTHS, size=(rows, 1))) - 30.0
    spreads = rng.choice([1.0, 8.0, 30.0], size=(rows, 1))
    return (offsets + spreads * rng.uniform(-1.0, 1.0, size=(rows, cols))).astype(np.float32)


def _softmax_args(case: Case) -> dict:
    p = case.params
    return {"x": _softmax_family(case.inputs, p["rows"], p["cols"], case.seed), "pad": p["pad"]}


def _softmax64(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# Rows longer than 1024 columns too: a kernel that hard-codes tl.arange(0, 1024) instead of BLOCK fails.
SOFTMAX_SIZES = [(1, 1, 0), (3, 7, 3), (2, 64, 0), (4, 65, 16), (5, 100, 7), (2, 257, 0), (1, 31, 1),
                 (3, 128, 128), (2, 1100, 5)]
SOFTMAX_INPUTS = ("shifted", "shifted", "deep", "shifted", "wide", "shifted", "deep", "shifted", "shifted")
SOFTMAX_HIDDEN = [(6, 513, 9, "shifted"), (2, 2, 30, "deep"), (1, 2500, 3, "shifted")]
SOFTMAX_DRAWN_ROWS, SOFTMAX_DRAWN_COLS, SOFTMAX_DRAWN_PAD = 4, 5000, 64  # BLOCK up to 8192
SOFTMAX_CONTRACT = Contract(
    name="part09.softmax_kernel",
    sizes=(Size("rows", 1, None, SOFTMAX_DRAWN_ROWS, "rows, one program each"),
           Size("cols", 1, None, SOFTMAX_DRAWN_COLS, "columns: BLOCK = next_power_of_2(cols)"),
           Size("pad", 0, None, SOFTMAX_DRAWN_PAD, "elements between a row's end and the next row's start "
                                                  "in x (a slice of a wider matrix)")),
    inputs=SOFTMAX_FAMILIES,
    method=no_kernel("a Triton kernel, run under Triton's interpreter, not gpusim: the check counts its "
                     "loads and stores through the watch and asks Triton's compiler"),
    solution=Solution(NOTEBOOK, (("kernel", "softmax_kernel"),)),
    examples=tuple({"rows": r, "cols": c, "pad": pad, "inputs": family}
                   for (r, c, pad), family in zip(SOFTMAX_SIZES, SOFTMAX_INPUTS, strict=True)),
    hidden_examples=tuple({"rows": r, "cols": c, "pad": pad, "inputs": family}
                          for r, c, pad, family in SOFTMAX_HIDDEN),
    drawn=2,
    block_sizes="BLOCK = next_power_of_2(n_cols), set by the check: any power of two",
)
TRITON_SOFTMAX = Task(
    name="softmax_kernel",
    cases=SOFTMAX_CONTRACT.cases(),
    contract=SOFTMAX_CONTRACT,
    make_args=_softmax_args,
    outputs=(Output("out", fill=SENTINEL),),
    reference=lambda case, args: {"out": _softmax64(args["x"])},
    configure=lambda case: None,  # the check launches the kernel itself
    rtol=1e-5,
    atol=1e-8,
    summary="each element of x read once, every access inside the arrays, on logits up to ±3e3 and rows "
            "below -1e4",
    hint="A fused softmax loads its row once, as one tile of BLOCK lanes, and reduces it in registers. The "
         "lanes past n_cols must take no part in the max or the sum, whatever the row's values (all of them "
         "may lie below -1e4). NaN or inf means exp() overflowed (float32 overflows above about 88.7).",
    more_hints=("Row r starts at x_ptr + r * x_row_stride (x is a slice of a wider matrix: its rows are "
                "farther apart than n_cols). Load the row with mask=cols < n_cols and other=-float('inf') "
                "(padding lanes must not win the max, and exp(-inf) = 0 keeps them out of the sum), subtract "
                "tl.max, exponentiate, divide by tl.sum.",),
    unwritten_hint="Program r writes row r: every column below n_cols, at out_ptr + r * out_row_stride + "
                   "cols.",
    error_hints={"OutOfBoundsAccess": "Row r of x starts at x_ptr + r * x_row_stride, and only its first "
                                      "n_cols lanes exist: mask every tl.load and tl.store with "
                                      "cols < n_cols.",
                 "TypeError": "Keep the kernel's parameters as the cell gives them."},
)


def _run_softmax(runs: _Runs):
    def call(kernel, args):
        from . import tritonwatch as watch

        triton = _triton()
        _parameters_as(kernel, TRITON_SOFTMAX.name, SOFTMAX_PARAMETERS)
        x = args["x"]
        rows, cols = x.shape
        x_view = watch.guarded_rows(x, cols + args["pad"])
        out = watch.guarded(np.full((rows, cols), SENTINEL, np.float32))
        arrays = {"x": x_view, "out": out, "n_cols": cols, "x_row_stride": x_view.stride(0),
                  "out_row_stride": out.stride(0)}
        runs.counts = watch.run(kernel, (rows,), arrays, {"BLOCK": triton.next_power_of_2(cols)})
        return out.numpy()

    return call


def try_softmax_kernel(kernel, x) -> np.ndarray:
    """For a "Try it" cell: softmax(x, axis=1) by your kernel on a guarded copy of x, every access watched."""
    from . import tritonwatch as watch

    triton = _triton()
    x = watch.guarded(np.asarray(x, dtype=np.float32))
    out = watch.guarded(np.full(tuple(x.shape), np.nan, np.float32))
    arrays = {"x": x, "out": out, "n_cols": x.shape[1], "x_row_stride": x.stride(0),
              "out_row_stride": out.stride(0)}
    watch.run(kernel, (x.shape[0],), arrays, {"BLOCK": triton.next_power_of_2(x.shape[1])})
    return out.numpy()


def check_softmax_kernel(kernel, seeds=None) -> None:
    """Check cell: out = softmax(x, axis=1), launched as kernel[(rows,)](x, out, n_cols, x.stride(0),
    out.stride(0), BLOCK=next_power_of_2(n_cols))."""
    _triton()
    task = TRITON_SOFTMAX.with_seeds(seeds) if seeds else TRITON_SOFTMAX
    runs = _Runs()
    triton_blocks = sorted({1 << max(0, (c.params["cols"] - 1).bit_length()) for c in task.cases})

    def further(case, kernel):
        if case is task.cases[0]:
            message = _gate(task, kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32",
                                           "x_row_stride": "i32", "out_row_stride": "i32"},
                            [{"BLOCK": b} for b in triton_blocks])
            if message:
                return message
        counts, p = runs.counts, case.params
        return (_budget(task, case, counts.loaded["x"], p["rows"] * p["cols"], "element loads from x",
                        "each element once: the softmax is fused",
                        "load the row once into a tile (BLOCK >= n_cols); tl.max and tl.sum reduce that tile "
                        "in registers, and the output is computed from it without loading x again.")
                or _budget(task, case, counts.stored["out"], p["rows"] * p["cols"], "element stores to out",
                           "each element once", "store the finished row once."))

    check_function(task, kernel, _run_softmax(runs), further)


# ------------------------------------------------------------------------------------------- ring_step

def ring_positions(n: int, p: int, layout: str) -> list[np.ndarray]:
    """The positions each device holds in the check's ring: contiguous blocks or stripes (any n and p)."""
    if layout == "striped":
        return [np.arange(r, n, p) for r in range(p)]
    return np.array_split(np.arange(n), p)


EARLIER_KEYS = 3  # keys a device has already folded in before the check's ring starts, in some cases


RING_FAMILIES = (
    Family("mixed", "q, k, v uniform in [-1, 1], the last key three times larger; q scaled by 1, 40 or 3000 "
                    "(scores up to thousands) with the seed, and in one case of three every device starting "
                    "from a state that already holds 3 earlier keys"),
    Family("deep", "scores rising with the key's position by 30, every one below -1e4: each query's top "
                   "score log-uniform from -1.1e4 to -1e6 (a masked key filled with -1e4 instead of -inf, "
                   "or a maximum that starts there, outweighs them all)"),
    Family("scaled", "q and k uniform in [-1, 1] times a factor log-uniform from 1e-3 to 3, v times one from "
                     "1e-3 to 1e3"),
)
RING_GAP = 30.0  # score step between neighbouring keys of a deep row


def _ring_qkv(family: str, n: int, d: int, rng: np.random.Generator, seed: int):
    """float64 q, k, v (n x d) of one of RING_FAMILIES."""
    if family == "deep":
        scale = 1.0 / math.sqrt(d)
        k, q = np.zeros((n, d)), np.zeros((n, d))
        k[:, 0], k[:, d - 1] = np.arange(n), 1.0
        q[:, 0] = RING_GAP / scale
        q[:, d - 1] = (-(10.0 ** rng.uniform(*DEEP_DEPTHS, n)) - RING_GAP * (n - 1)) / scale
        return q, k, rng.uniform(-1.0, 1.0, (n, d))
    if family == "scaled":
        q, k = (rng.uniform(-1.0, 1.0, (n, d)) * 10.0 ** rng.uniform(-3.0, 0.5) for _ in range(2))
        return q, k, rng.uniform(-1.0, 1.0, (n, d)) * 10.0 ** rng.uniform(-3.0, 3.0)
    loud = (1.0, 40.0, 3000.0)[seed % 3]  # scores up to thousands: float32 exp overflows without the max
    q, k, v = (rng.uniform(-1.0, 1.0, size=(n, d)) for _ in range(3))
    k[-1] *= 3.0  # the last key stands out: for most queries the max arrives with the last block
    return q * loud, k, v


def _ring_args(case: Case) -> dict:
    p = case.params
    rng = np.random.default_rng([case.seed, 5])
    family = case.inputs or "mixed"
    q, k, v = _ring_qkv(family, p["n"], p["d"], rng, case.seed)
    layout = ("contiguous", "striped")[p["striped"]]
    orders = [rng.permutation(p["p"]) for _ in range(p["p"])]  # each device meets the blocks in its own order
    # In one mixed case of three every device starts from a state that already holds EARLIER keys (positions
    # before 0, seen by every query), as after a previous ring pass: ring_step must fold into the state it is
    # given.
    earlier = EARLIER_KEYS if family == "mixed" and case.seed % 3 == 2 else 0
    k0, v0 = (rng.uniform(-1.0, 1.0, size=(earlier, p["d"])).astype(np.float32) for _ in range(2))
    arrays = {"q": q.astype(np.float32), "k": k.astype(np.float32), "v": v.astype(np.float32),
              "k0": k0, "v0": v0}
    for a in arrays.values():
        a.flags.writeable = False
    return {**arrays, "positions": ring_positions(p["n"], p["p"], layout), "orders": orders,
            "causal": bool(p["causal"])}


def _earlier_state(q, k0, v0):
    """The float64 (m, l, acc) of queries q after the earlier keys k0 (all visible), or the empty state."""
    if not len(k0):
        return np.full(len(q), -np.inf), np.zeros(len(q)), np.zeros((len(q), q.shape[1]))
    s = np.asarray(q, np.float64) @ np.asarray(k0, np.float64).T / math.sqrt(q.shape[1])
    m = s.max(axis=1)
    e = np.exp(s - m[:, None])
    return m, e.sum(axis=1), e @ np.asarray(v0, np.float64)


def _ring_reference(case: Case, args: dict) -> dict:
    q, k, v, k0, v0 = (np.asarray(args[name], dtype=np.float64) for name in ("q", "k", "v", "k0", "v0"))
    scores = q @ k.T / math.sqrt(q.shape[1])
    if args["causal"]:
        n = len(q)
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    scores = np.concatenate([q @ k0.T / math.sqrt(q.shape[1]), scores], axis=1)
    v = np.concatenate([v0, v])
    m = scores.max(axis=1, keepdims=True)
    e = np.exp(scores - m)
    total = e.sum(axis=1, keepdims=True)
    return {"o": e / total @ v, "lse": (m + np.log(total))[:, 0]}


def _run_ring(function, args):
    """All devices of the check's ring, interleaved: step by step, every device folds in its next block (in
    its own random order) with the learner's ring_step. Returns the gathered o and lse."""
    q, k, v, positions = args["q"], args["k"], args["v"], args["positions"]
    n, d = q.shape
    states = {}
    for r, pos in enumerate(positions):
        if len(pos):
            states[r] = _earlier_state(q[pos], args["k0"], args["v0"])
    for step in range(len(positions)):
        for r in states:
            b = int(args["orders"][r][step])
            if not len(positions[b]):
                continue  # a device with no positions sends an empty block: nothing to fold in
            qp, kp = positions[r], positions[b]
            returned = function(*states[r], q[qp], k[kp], v[kp], qp, kp, args["causal"])
            states[r] = _state(returned, len(qp), d)
    o, lse = np.full((n, d), np.nan), np.full(n, np.nan)
    for r, (m, total, acc) in states.items():
        with np.errstate(divide="ignore", invalid="ignore"):
            o[positions[r]] = acc / total[:, None]
            lse[positions[r]] = m + np.log(total)
    return o, lse


def _state(returned, rows: int, d: int):
    if not (isinstance(returned, tuple) and len(returned) == 3):
        raise TypeError(f"ring_step should return the new (m, l, acc), not {type(returned).__name__}")
    m, total, acc = (np.asarray(x, dtype=np.float64) for x in returned)
    if m.shape != (rows,) or total.shape != (rows,) or acc.shape != (rows, d):
        raise TypeError(f"ring_step returned m, l, acc of shapes {m.shape}, {total.shape}, {acc.shape}; for "
                        f"{rows} query rows of dimension {d} they must be ({rows},), ({rows},), ({rows}, "
                        f"{d}): the state a device keeps is one max, one sum and one output row per query.")
    return m, total, acc


RING_NUDGE = ("fold the block into the state you are given, as the online softmax of Part 6 folds a tile: "
              "what changes when the block's scores raise a row's maximum, and what a row keeps when the "
              "block holds no key it may see.")
RING_DERIVATION = (
    "s = q @ k.T / sqrt(d), with s = -inf where k_pos > q_pos when causal. m_new = max(m, max of s per row); "
    "alpha = exp(m - m_new) rescales what was accumulated under the old maximum; p = exp(s - m_new); "
    "l = alpha * l + p.sum(1); acc = alpha * acc + p @ v. A row that has seen no key yet has m = -inf: where "
    "m_new is -inf use 0 in the exponents (exp(-inf - (-inf)) is NaN). The blocks come in any order: the "
    "largest score may arrive last. ring_step must use only its arguments: the check runs several devices' "
    "steps interleaved, and sometimes starts a device from a state that already holds earlier keys.")

RING_KEYS = ("n", "p", "d", "causal", "striped")
RING_SIZES = [(8, 2, 4, 0, 0), (8, 2, 4, 1, 0), (12, 3, 8, 1, 0), (12, 3, 8, 1, 1), (13, 4, 8, 1, 1),
              (10, 4, 4, 0, 1), (17, 3, 16, 1, 0), (5, 5, 4, 1, 1), (1, 1, 4, 1, 0), (30, 4, 8, 1, 1)]
RING_FAMILY_SIZES = [((20, 4, 8, 1, 0), "deep"), ((9, 3, 4, 1, 1), "deep"), ((14, 3, 8, 0, 1), "scaled")]
RING_HIDDEN = [((40, 5, 8, 1, 0), "mixed"), ((21, 2, 4, 1, 1), "mixed"), ((11, 4, 2, 1, 1), "deep")]
RING_DRAWN_N, RING_DRAWN_D = 40, 16  # past the longest example (30); p up to n + 2 (devices with no keys)
RING_STEP_CONTRACT = Contract(
    name="part09.ring_step",
    sizes=(Size("n", 1, None, RING_DRAWN_N, "positions in the sequence"),
           Size("p", 1, None, lambda q: q["n"] + 2, "devices in the ring (more than n: some hold nothing)"),
           Size("d", 2, None, RING_DRAWN_D, "the head dimension"),
           Size("causal", 0, 1, 1, "1: a query sees only keys at its position or before"),
           Size("striped", 0, 1, 1, "1: striped layout, 0: contiguous blocks")),
    inputs=RING_FAMILIES,
    method=no_kernel("plain Python, no kernel: the check folds every device's blocks with it, in random "
                     "orders, and compares the result with float64 attention"),
    solution=Solution(NOTEBOOK, (("function", "ring_step"),)),
    examples=tuple({**dict(zip(RING_KEYS, size, strict=True)), "inputs": family}
                   for size, family in [(size, "mixed") for size in RING_SIZES] + RING_FAMILY_SIZES),
    hidden_examples=tuple({**dict(zip(RING_KEYS, size, strict=True)), "inputs": family}
                          for size, family in RING_HIDDEN),
    drawn=3,
    block_sizes="no kernel",
)
RING_STEP = Task(
    name="ring_step",
    cases=RING_STEP_CONTRACT.cases(),
    contract=RING_STEP_CONTRACT,
    make_args=_ring_args,
    outputs=(Output("o", fill=None), Output("lse", fill=None)),
    reference=_ring_reference,
    configure=lambda case: None,  # no launch: a plain function
    rtol=1e-4,
    atol=1e-5,
    summary="O and logsumexp equal float64 attention for random block orders, scores up to thousands and "
            "below -1e4, causal and not",
    hint=RING_NUDGE,
    more_hints=(RING_DERIVATION,),
)


def check_ring_step(function, seeds=None) -> None:
    """Check cell: ring_step(m, l, acc, q, k, v, q_pos, k_pos, causal) -> (m, l, acc), folded over every
    device's K/V blocks in random orders and compared with float64 attention."""
    task = RING_STEP.with_seeds(seeds) if seeds else RING_STEP
    try:
        check_function(task, function, _run_ring)
    except CheckFailed as failure:
        raise CheckFailed(str(failure) + _ring_diagnosis(function)) from None


def _ring_probes():
    """(what it tests, blocks (k, v, k_pos), starting state, causal) of small folds, simplest first, and the
    queries and their positions (2, 4, 6)."""
    rng = np.random.default_rng(3)
    q, k1, k2, v1, v2, acc = (rng.uniform(-1.0, 1.0, (3, 4)) for _ in range(6))
    loud = 2000 * q  # key j scores 1000 |q_j|^2 with query j: exp overflows float64 without a shift
    empty = (np.full(3, -np.inf), np.zeros(3), np.zeros((3, 4)))
    holding = (np.array([0.5, -1.0, 2.0]), np.array([1.5, 2.0, 1.0]), acc)
    q_pos, late = np.array([2, 4, 6]), np.array([7, 9, 11])
    probes = [
        ("one block folded into the empty state", [(k1, v1, late)], empty, False),
        ("one block of scores in the thousands", [(loud, v1, late)], empty, False),
        ("a second block whose scores raise the maximum", [(k1, v1, late), (loud, v2, late)], empty, False),
        ("a second block whose scores are all far lower", [(loud, v1, late), (k2, v2, late)], empty, False),
        ("a causal block holding the queries' own positions (a query sees its own key)",
         [(k1, v1, q_pos.copy())], empty, True),
        ("a causal block at positions 1, 2, 3 (the mask compares positions, not the rows' indices)",
         [(k1, v1, np.array([1, 2, 3]))], empty, True),
        ("a causal block wholly in the future of every query, then one they may see",
         [(k2, v2, late), (k1, v1, np.array([1, 2, 3]))], empty, True),
        ("a block folded into a state that already holds other keys", [(k1, v1, late)], holding, False),
    ]
    return probes, q, q_pos


def _output_and_lse(state):
    m, total, acc = state
    with np.errstate(invalid="ignore", divide="ignore"):
        return acc / total[:, None], m + np.log(total)


def _ring_diagnosis(function) -> str:
    """The first of a few small folds (one block, a larger or smaller maximum, the causal mask, a state
    holding earlier keys) where the learner's ring_step differs from the online softmax, as a sentence."""
    probes, q, q_pos = _ring_probes()
    for what, blocks, start, causal in probes:
        expected, got = start, start
        try:
            for k, v, k_pos in blocks:
                expected = _fold(expected, q, k, v, q_pos, k_pos, causal)
                got = _state(function(*(np.copy(x) for x in got), q.copy(), k.copy(), v.copy(), q_pos.copy(),
                                      k_pos.copy(), causal), len(q), q.shape[1])
        except Exception:  # noqa: BLE001 (the check's own message already names the exception)
            return ""
        pairs = zip(_output_and_lse(expected), _output_and_lse(got), strict=True)
        if not all(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True) for a, b in pairs):
            return f"\nDiagnosis: your ring_step is first wrong for {what} (3 queries, d = 4)."
    return ""


def _fold(state, q, k, v, q_pos, k_pos, causal):
    """The online softmax's fold of one block into (m, l, acc), float64 (the probes' reference)."""
    m, total, acc = state
    s = q @ k.T / math.sqrt(q.shape[1])
    if causal:
        s = np.where(k_pos[None, :] <= q_pos[:, None], s, -np.inf)
    m_new = np.maximum(m, s.max(axis=1))
    shift = np.where(np.isinf(m_new), 0.0, m_new)
    alpha = np.exp(m - shift)
    e = np.exp(s - shift[:, None])
    return m_new, alpha * total + e.sum(axis=1), alpha[:, None] * acc + e @ v


# ---------------------------------------------------------------------------------------------- stripes

def causal_work(layout: list[np.ndarray]) -> np.ndarray:
    """work[step, device]: (query, key) pairs with key <= query that a device computes in each ring step."""
    p = len(layout)
    work = np.zeros((p, p), dtype=np.int64)
    for step in range(p):
        for r in range(p):
            q, k = layout[r], layout[(r - step) % p]
            work[step, r] = int((k[None, :] <= q[:, None]).sum())
    return work


def _layout(returned, n: int, p: int) -> list[np.ndarray]:
    if not isinstance(returned, (list, tuple)) or len(returned) != p:
        raise TypeError(f"stripes({n}, {p}) should return a list of {p} arrays (one per device), not "
                        f"{type(returned).__name__}" + (f" of length {len(returned)}"
                                                         if isinstance(returned, (list, tuple)) else ""))
    layout = []
    for r, held in enumerate(returned):
        held = np.asarray(held)
        if held.ndim != 1 or (held.size and held.dtype.kind not in "iu"):
            raise TypeError(f"stripes({n}, {p})[{r}] should be a 1-D array of integer positions, not an "
                            f"array of shape {held.shape} and type {held.dtype}")
        layout.append(held.astype(np.int64))
    return layout


def _held(function, args):
    n, p = args["n"], args["p"]
    layout = _layout(function(n, p), n, p)
    every = np.concatenate(layout) if layout else np.zeros(0, np.int64)
    outside = every[(every < 0) | (every >= n)]
    if outside.size:
        raise ValueError(f"stripes({n}, {p}) hands out position {int(outside[0])}, but positions run from 0 "
                         f"to {n - 1}")
    return np.bincount(every, minlength=n)


STRIPE_SIZES = [(16, 4), (17, 4), (10, 3), (64, 2), (65, 2), (100, 7), (7, 7), (5, 8), (1, 1), (97, 5),
                (300, 16)]
STRIPE_HIDDEN = [(1000, 3), (33, 32), (129, 8)]
STRIPE_DRAWN_N, STRIPE_DRAWN_P = 400, 40  # past the largest visible n (300) and p (16); p above n too
STRIPES_CONTRACT = Contract(
    name="part09.stripes",
    sizes=(Size("n", 1, None, STRIPE_DRAWN_N, "positions in the sequence"),
           Size("p", 1, None, STRIPE_DRAWN_P, "devices in the ring (more than n too: some hold nothing)")),
    inputs=(Family("sizes", "n and p are the whole input"),),
    method=no_kernel("plain Python, no kernel: the layout's sizes and its causal work per ring step are "
                     "measured"),
    solution=Solution(NOTEBOOK, (("function", "stripes"),)),
    examples=tuple({"n": n, "p": p} for n, p in STRIPE_SIZES),
    hidden_examples=tuple({"n": n, "p": p} for n, p in STRIPE_HIDDEN),
    drawn=3,
    block_sizes="no kernel",
)
STRIPES = Task(
    name="stripes",
    cases=STRIPES_CONTRACT.cases(),
    contract=STRIPES_CONTRACT,
    make_args=lambda case: dict(case.params),
    outputs=(Output("held", fill=None),),
    reference=lambda case, args: {"held": np.ones(args["n"])},
    configure=lambda case: None,
    exact=True,
    summary="every position on exactly one device, sizes within 1, and in every ring step the causal work "
            "of the busiest and the idlest device within ceil(n/p) pairs",
    hint="`held` counts the devices holding each position: every position 0..n-1 must be on exactly one "
         "device (0 = on none, 2 = on two), for any n and p, p larger than n too.",
    more_hints=("Stripes: device r holds r, r + p, r + 2p, ... below n (np.arange(r, n, p)); a device with "
                "r >= n holds nothing, an empty array.",),
)


def _balance(case: Case, function) -> str | None:
    n, p = case.params["n"], case.params["p"]
    layout = _layout(function(n, p), n, p)
    sizes = [len(held) for held in layout]
    if max(sizes) - min(sizes) > 1:
        return (f"stripes({n}, {p}) holds every position once, but the devices hold {sizes} positions: the "
                f"largest and smallest differ by {max(sizes) - min(sizes)}, and the budget is 1 (n = {n} "
                f"positions on {p} devices: {n // p} or {n // p + 1} each).\nHint: a layout that is even "
                f"only when p divides n piles the remainder on one device; stripes r, r + p, ... spread it.")
    work = causal_work(layout)
    spread = work.max(axis=1) - work.min(axis=1)
    limit = -(-n // p)
    step = int(np.argmax(spread))
    if spread[step] > limit:
        busy, idle = int(np.argmax(work[step])), int(np.argmin(work[step]))
        return (f"stripes({n}, {p}) holds every position once, but it does not balance causal ring "
                f"attention: in step {step} device {busy} computes {work[step, busy]} (query, key) pairs "
                f"and device {idle} only {work[step, idle]}; the budget for the difference is ceil(n/p) = "
                f"{limit}. "
                f"Work per step (rows: steps, columns: devices):\n{work}\nHint: contiguous blocks leave a "
                f"device idle whenever its K/V block lies in the future of its queries; interleave the "
                f"positions (stripes) so every device holds early and late positions alike."
                + _zigzag_note(n, p))
    return None


def _zigzag_note(n: int, p: int) -> str:
    """Why a zig-zag layout (two chunks per device) may miss the budget: the task asks for stripes."""
    if n % (2 * p) == 0:
        return ""
    return (f" (The task asks for stripes, which meet this budget for every n and p. Zig-zag chunks, one "
            f"early and one late per device, meet it only when 2p divides n: at n = {n}, p = {p} the {2 * p} "
            f"chunks cannot all have the same length, and the per-step work follows their lengths.)")


def check_stripes(function, seeds=None) -> None:
    """Check cell: stripes(n, p) -> a list of p arrays, the positions each device holds. (The layout has no
    randomness: `seeds` give the hidden sizes and draw other n and p.)"""
    check_function(STRIPES.with_seeds(seeds) if seeds else STRIPES, function, _held, _balance)


TASKS = (SCALED_ADD, TRITON_SOFTMAX, RING_STEP, STRIPES)


def hint(name: str, level: int = 2) -> None:
    """Print hint ``level`` of a task of this notebook (level 1 is the one the check's messages show)."""
    print_hint(TASKS, name, level)


__all__ = ["SENTINEL", "VECTOR_BLOCKS", "CheckFailed", "causal_work", "check_ring_step", "check_scaled_add",
           "check_softmax_kernel", "check_stripes", "hint", "ring_positions", "softmax_inputs",
           "try_scaled_add", "try_softmax_kernel"]

from . import in_own_notebook  # noqa: E402 (the package has finished importing its parts by now)

if in_own_notebook():  # the exercise notebook: its checks will compile, so start the front end now
    from . import tritongate

    tritongate.start_early()

