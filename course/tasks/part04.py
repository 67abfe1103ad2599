"""Checks for exercise notebook 04 (what makes kernels fast): a coalesced bias add, a transpose through padded
shared memory, and a fused sigmoid backward that recomputes instead of storing.

Each task has a contract (:mod:`course.tasks.contract`): any shape from 1 × 1 up, and for the 1-D kernels any
block of 1 to 1024 threads, whole warps or not (the transpose's blocks are the 32 × 32 the exercise fixes);
input families over the values' whole domain (signs and magnitudes log-uniform from 1e-30 to 1e30, sums that
cancel exactly, x up to ±3e38 where exp() overflows); float32 storage and arithmetic. The method is every
gpusim counter against the reference solution of ``solutions/04_memory_and_performance`` on the same case:
``global_sectors`` (distinct 32-byte segments per warp-level access), ``bank_conflicts``, shared memory (the
transpose's padded tile, bounded on both sides), global loads and stores and ``max_thread_accesses`` (one
element per thread). :func:`warp_sectors` computes the sectors of the intended access pattern, which the
messages quote as what the task asks for.

The shapes make every shortcut visible: each dimension in turn the larger one, a grid with more blocks along
one axis than the other, sizes past 128 (twice a hard-coded 64), and several block sizes for the 1-D kernels
(a hard-coded ``blockIdx.x * 128`` fails).
"""

from __future__ import annotations

import numpy as np

from .common import Case, Output, Task, check, print_hint
from .contract import EXACT, Budgeted, Contract, Family, Size, Slack, Solution, method
from .inputs import signed_magnitudes

WARP = 32
SECTOR_BYTES = 32
FLOAT_BYTES = 4
TILE = 32  # transpose tile: 32 x 32 threads per block, one element each
# (x values where exp() overflows, in float32 above 88.7 and in float64 above 709, then tame ones)
EXTREME_X = (-3.0e38, 3.0e38, -1.0e4, 1.0e4, -800.0, 800.0, -120.0, 120.0, -89.0, 89.0, -30.0, 30.0, 0.0)
MAX_THREADS = 1024
DRAWN = 1  # cases drawn per check and set of seeds, on top of the explicit ones (each costs the reference
# solution a run too, in the hidden tests)
DRAWN_SIDE = 160  # drawn rows and columns go up to this, past the largest example (131)
DRAWN_ELEMENTS = 6000  # and a drawn matrix holds at most this many elements
DRAWN_N = 1200  # drawn 1-D sizes go up to this, past the largest example (1000)
DRAWN_THREADS = 288  # drawn blocks up to this many threads, past the largest visible block
NOTEBOOK = "04_memory_and_performance"
CHECK_LAUNCHES = {"blocks": "the check launches the kernel itself, one thread per element",
                  "threads": "the check launches the kernel itself, at the case's block size",
                  "dynamic_shared_bytes": "the check's launch gives none"}
VALUE_FAMILIES = (
    Family("uniform", "uniform in [-1, 1]"),
    Family("wide", "signs at random, magnitudes log-uniform from 1e-30 to 1e30, a tenth of them 0"),
    Family("opposite", "bias[col] = -a[row, col] for every row: every element of out exactly 0"),
)


def _random(shape, seed: int, salt: int = 0) -> np.ndarray:
    return np.random.default_rng([seed, salt]).uniform(-1.0, 1.0, size=shape).astype(np.float32)


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def warp_sectors(flat_indices_per_warp) -> int:
    """Distinct 32-byte sectors summed over warps, for float32 elements at the given flat indices."""
    total = 0
    for indices in flat_indices_per_warp:
        if len(indices):
            total += len(np.unique(np.asarray(indices) * FLOAT_BYTES // SECTOR_BYTES))
    return total


def _row_chunks(rows: int, cols: int):
    """Flat indices touched by warps that each cover up to 32 neighbouring columns of one row."""
    for r in range(rows):
        for c0 in range(0, cols, WARP):
            yield r * cols + np.arange(c0, min(c0 + WARP, cols))


def _one_d_launch(count: str):
    """The 1-D launch of a case: cdiv(elements, threads) blocks of the case's `threads`."""

    def configure(case: Case) -> tuple:
        p = case.params
        elements = p[count] if count in p else p["rows"] * p["cols"]
        return _cdiv(elements, p["threads"]), p["threads"]

    return configure


ONE_EACH_HINT = ("Each thread handles exactly one element, the one at i = cuda.grid(1), with no loop over "
                 "elements: the launch already has a thread for every element, and a few threads doing all "
                 "the work leave the rest of the GPU idle.")


def one_element_per_thread(names: str, slack: int = 0) -> tuple[Budgeted, Budgeted]:
    """Budgets of a kernel with one thread per element: every element has a thread that works, and no thread
    makes more element accesses than the reference's (plus ``slack``; ``names`` says which they are)."""
    return (Budgeted("active_threads", "one thread per element", ONE_EACH_HINT, most=None, least=EXACT),
            Budgeted("max_thread_accesses", f"one element per thread: {names}", ONE_EACH_HINT,
                     most=Slack(extra=lambda r, p: slack, words=str(slack)) if slack else EXACT))


def _one_d_sizes(count: str) -> tuple[Size, ...]:
    return (Size(count, 1, None, DRAWN_N, "elements"),
            Size("threads", 1, MAX_THREADS, DRAWN_THREADS, "threads per block, any number the launch allows"))


# ------------------------------------------------------------------------------------------------ add_bias

def _bias_args(case: Case) -> dict:
    """a and bias of the case's family ("uniform", the values the notebook's cases had, if none is named)."""
    rows, cols = case.params["rows"], case.params["cols"]
    if case.inputs in ("uniform", ""):
        a, bias = _random((rows, cols), case.seed, 1), _random(cols, case.seed, 2)
    elif case.inputs == "wide":
        rng = np.random.default_rng([case.seed, 1, 1])
        a = signed_magnitudes(rng, (rows, cols), (-30.0, 30.0))
        bias = signed_magnitudes(rng, cols, (-30.0, 30.0))
    elif case.inputs == "opposite":
        bias = signed_magnitudes(np.random.default_rng([case.seed, 2, 1]), cols, (-30.0, 30.0))
        a = np.tile(-bias, (rows, 1))
    else:
        raise ValueError(f"no input family {case.inputs!r}")
    return {"a": a.astype(np.float32), "bias": bias.astype(np.float32),
            "out": np.empty((rows, cols), np.float32)}


def _bias_sector_budget(p: dict) -> int:
    """Sectors of the coalesced mapping: a warp holds 32 consecutive flat elements of a, out and their bias
    (fewer in the last warp of a block whose size is not a whole number of warps)."""
    rows, cols, threads = p["rows"], p["cols"], p["threads"]
    n = rows * cols
    warps = [np.arange(start, min(start + WARP, block + threads, n))
             for block in range(0, n, threads) for start in range(block, min(block + threads, n), WARP)]
    return 2 * warp_sectors(warps) + warp_sectors([w % cols for w in warps])


BIAS_THREADS = one_element_per_thread("a[row, col], bias[col] and out[row, col], with room for staging a few "
                                      "more", slack=3)
SECTORS_HINT = ("Neighbouring threads (consecutive i) must touch neighbouring addresses. In a row-major "
                "array neighbours along a row are adjacent in memory: take col = i % cols and "
                "row = i // cols, not the other way round.")


def _matrix_sizes(block: bool) -> tuple[Size, ...]:
    sizes = (Size("rows", 1, None, DRAWN_SIDE, "rows of a"),
             Size("cols", 1, None, lambda p: min(DRAWN_SIDE, DRAWN_ELEMENTS // p["rows"]), "columns of a"))
    if block:
        sizes += (Size("threads", 1, MAX_THREADS, DRAWN_THREADS, "threads per block, any number the launch "
                       "allows"),)
    return sizes


ADD_BIAS_CONTRACT = Contract(
    name="part04.add_bias",
    sizes=_matrix_sizes(block=True),
    inputs=VALUE_FAMILIES,
    method=method(
        (
            BIAS_THREADS[0],
            Budgeted("global_loads", "2 per element: a[row, col] and bias[col]",
                     "Read a[row, col] and bias[col] once each, in the thread that owns the element."),
            Budgeted("global_stores", "1 per element", "Write out[row, col] once."),
            BIAS_THREADS[1],
            Budgeted("global_sectors", lambda p: f"what a warp of 32 consecutive threads touching 32 "
                     f"consecutive elements of a row-major array needs: 4 sectors per array per warp, plus "
                     f"a few where a warp crosses a row end, {_bias_sector_budget(p)} here", SECTORS_HINT,
                     most=Slack(0.25, lambda r, p: 2, "2")),
            Budgeted("global_requests", "one warp-wide access per load and store instruction of a warp",
                     SECTORS_HINT, most=Slack(0.25)),
        ),
        free=CHECK_LAUNCHES),
    solution=Solution(NOTEBOOK, (("kernel", "add_bias"),)),
    examples=tuple({"rows": r, "cols": c, "threads": t}
                   for r, c, t in ((20, 33, 128), (33, 20, 64), (3, 5, 64), (1, 1, 128), (3, 131, 64),
                                   (131, 2, 128), (8, 32, 128), (9, 11, 37))),
    hidden_examples=tuple({"rows": r, "cols": c, "threads": t}
                          for r, c, t in ((70, 3, 256), (2, 257, 32), (1, 67, 64), (67, 1, 128),
                                          (5, 40, 1000))),
    drawn=DRAWN,
    block_sizes="any number of threads from 1 to 1024, multiples of 32 or not",
    cost=lambda p: p["rows"] * p["cols"] + p["threads"],
)

ADD_BIAS = Task(
    name="add_bias",
    cases=ADD_BIAS_CONTRACT.cases(),
    contract=ADD_BIAS_CONTRACT,
    make_args=_bias_args,
    outputs=(Output("out"),),
    reference=lambda case, args: {"out": args["a"].astype(np.float64) + args["bias"].astype(np.float64)},
    scale=lambda case, args: {"out": np.abs(args["a"].astype(np.float64)) + np.abs(args["bias"])},
    scale_words="(|a| + |bias|)",
    configure=_one_d_launch("elements"),
    rtol=1e-6,
    atol=0.0,
    summary="one element per thread, coalesced: 4 sectors per array per warp, at any block size",
    more_hints=("i = cuda.grid(1); if i < rows * cols: row = i // cols, col = i % cols, and out[row, col] = "
                "a[row, col] + bias[col]. Then the 32 threads of a warp take 32 neighbouring elements of a "
                "row: "
                "4 sectors of a, 4 of out and (within a row) 4 of bias.",),
    hint="Thread i handles one element: row = i // cols, col = i % cols (cols = a.shape[1], for every shape, "
         "not only square ones), out[row, col] = a[row, col] + bias[col]. Compute i with cuda.grid(1): the "
         "check launches blocks of any size from 1 to 1024 threads.",
    unwritten_hint="Every i below rows * cols must write its element: i = cuda.grid(1) (not a fixed block "
                   "size times blockIdx.x), row = i // cols, col = i % cols.",
    error_hints={
        "OutOfBoundsError": "The grid has more threads than elements: guard with `if i < rows * cols:` "
                            "before touching memory, and split i with the number of columns "
                            "(row = i // cols). Read bias from global memory: a shared copy sized by a "
                            "constant is too small for wide matrices.",
        "WriteConflictError": "Two threads computed the same (row, col): split i with the number of "
                              "columns, row = i // cols and col = i % cols, so every i has its own element.",
    },
)


def check_add_bias(kernel, seeds=None) -> None:
    """Check cell of the coalesced bias-add exercise."""
    task = ADD_BIAS.with_seeds(seeds) if seeds else ADD_BIAS
    check(task, {"kernel": kernel})


# ----------------------------------------------------------------------------------------------- transpose

TRANSPOSE_FAMILIES = VALUE_FAMILIES[:2]
TRANSPOSE_DRAWN_BLOCKS = 6  # a drawn matrix takes at most this many 32 × 32 blocks (each costs 1024 threads)


def _transpose_args(case: Case) -> dict:
    """a of the case's family ("uniform", the values the notebook's cases had, where none is named)."""
    rows, cols = case.params["rows"], case.params["cols"]
    if case.inputs in ("uniform", ""):
        a = _random((rows, cols), case.seed, 3)
    else:
        a = signed_magnitudes(np.random.default_rng([case.seed, 3, 1]), (rows, cols), (-30.0, 30.0))
    return {"a": a.astype(np.float32), "out": np.empty((cols, rows), np.float32)}


def transpose_sector_budget(p: dict) -> int:
    """Coalesced reads of a (rows x cols) and coalesced writes of out (cols x rows), in 32-wide tiles."""
    rows, cols = p["rows"], p["cols"]
    return warp_sectors(_row_chunks(rows, cols)) + warp_sectors(_row_chunks(cols, rows))


TRANSPOSE_ONE_EACH = ("Every thread of the 32 × 32 block moves one element: thread (tx, ty) loads "
                      "a[by*32 + ty, bx*32 + tx] into tile[ty, tx] and, after the barrier, writes "
                      "tile[tx, ty] to out[bx*32 + ty, by*32 + tx]. No loops: a few threads copying the "
                      "whole tile leave the others idle.")

CONFLICTS_HINT = ("Reading tile[tx, ty] walks down a column: with 32 floats per row every element of a "
                  "column is in the same bank (a 32-way conflict). Pad the rows to 33 floats: "
                  "cuda.shared.array((32, 33), float32).")

TRANSPOSE_CONTRACT = Contract(
    name="part04.transpose",
    sizes=(Size("rows", 1, None, DRAWN_SIDE // 2, "rows of a"),
           Size("cols", 1, None, lambda p: min(DRAWN_SIDE // 2, TILE * (TRANSPOSE_DRAWN_BLOCKS //
                                                                        _cdiv(p["rows"], TILE))),
                "columns of a")),
    inputs=TRANSPOSE_FAMILIES,
    method=method(
        (
            Budgeted("global_loads", "1 per element", "Read each element of a once, into the tile."),
            Budgeted("global_stores", "1 per element", "Write each element of out once, from the tile."),
            Budgeted("max_thread_accesses", "one element per thread: read a, write the tile, read the tile, "
                     "write out", TRANSPOSE_ONE_EACH),
            Budgeted("active_threads", "one thread per element", TRANSPOSE_ONE_EACH, most=None,
                     least=Slack(extra=lambda r, p: r["active_threads"] - p["rows"] * p["cols"],
                                 words="the threads that only load or only store: one a element")),
            Budgeted("global_sectors", lambda p: f"coalesced reads of `a` and coalesced writes of `out`: a "
                     f"warp's 32 threads touch 32 neighbouring elements of one row, for both arrays, "
                     f"{transpose_sector_budget(p)} sectors here",
                     "Reading a[y, x] with x from threadIdx.x is coalesced, but writing out[x, y] sends each "
                     "thread of a warp to a different row of out. Stage the tile in shared memory, then let "
                     "threadIdx.x run along the rows of out when writing: "
                     "out[block_x * 32 + ty, block_y * 32 + tx] = tile[tx, ty].",
                     most=Slack(0.25, lambda r, p: 2, "2")),
            Budgeted("bank_conflicts", "none: every warp-level access to the tile should touch 32 different "
                     "banks", CONFLICTS_HINT),
            Budgeted("static_shared_bytes", "one 32 × 33 float32 tile (or 32 × 32, if it is free of bank "
                     "conflicts another way)",
                     "One float32 tile of 32 rows, padded to 33 columns: "
                     "cuda.shared.array((32, 33), float32). A float64 tile doubles the shared memory (and "
                     "the "
                     "traffic) for the same values.",
                     least=Slack(extra=lambda r, p: TILE * FLOAT_BYTES, words="no padding column")),
            Budgeted("global_requests", "one warp-wide access per load and store instruction of a warp",
                     "Thread (tx, ty) reads a[by*32 + ty, bx*32 + tx] and writes out[bx*32 + ty, by*32 + "
                     "tx]: "
                     "a warp's 32 threads, consecutive tx, touch one row of each.", most=Slack(0.25)),
        ),
        free={"blocks": "the check launches the kernel itself, one 32 × 32 block per tile",
              "threads": "the check launches the kernel itself, 32 × 32 threads a block",
              "dynamic_shared_bytes": "the check's launch gives none"}),
    solution=Solution(NOTEBOOK, (("kernel", "transpose"),)),
    examples=tuple({"rows": r, "cols": c}
                   for r, c in ((70, 33), (33, 70), (3, 5), (1, 1), (32, 32), (1, 40), (40, 1))),
    hidden_examples=tuple({"rows": r, "cols": c} for r, c in ((65, 2), (3, 67))),
    drawn=DRAWN,
    block_sizes="32 × 32 threads, as the exercise fixes",
    cost=lambda p: _cdiv(p["rows"], TILE) * _cdiv(p["cols"], TILE),
)

TRANSPOSE = Task(
    name="transpose",
    cases=TRANSPOSE_CONTRACT.cases(),
    contract=TRANSPOSE_CONTRACT,
    make_args=_transpose_args,
    outputs=(Output("out"),),
    reference=lambda case, args: {"out": args["a"].astype(np.float64).T},
    configure=lambda case: ((_cdiv(case.params["cols"], TILE), _cdiv(case.params["rows"], TILE)),
                            (TILE, TILE)),
    exact=True,
    summary="one element per thread, coalesced reads and writes, no bank conflicts",
    more_hints=("tile = cuda.shared.array((32, 33), float32): the 33rd column puts the 32 elements of a tile "
                "column in 32 different banks. Load: if row < a.shape[0] and col < a.shape[1], tile[ty, tx] "
                "= "
                "a[by*32 + ty, bx*32 + tx]. cuda.syncthreads(), outside any `if`. Store: out_row = bx*32 + "
                "ty, "
                "out_col = by*32 + tx; if out_row < out.shape[0] and out_col < out.shape[1], "
                "out[out_row, out_col] = tile[tx, ty].",),
    hint="out[j, i] = a[i, j]. The block at (blockIdx.x, blockIdx.y) reads the tile of a at rows "
         "blockIdx.y*32 + ty, columns blockIdx.x*32 + tx, and writes it to out at rows blockIdx.x*32 + ty, "
         "columns blockIdx.y*32 + tx. blockIdx.x counts tiles along the columns of a, blockIdx.y along its "
         "rows: the grid has a different number of blocks along each when a is not square.",
    unwritten_hint="Every thread whose output position (row < out.shape[0], column < out.shape[1]) is "
                   "valid must write it, even if its input position (the one it loaded) is outside a: the "
                   "guards for loading and for storing are different. blockIdx.x runs over the columns of a "
                   "(the rows of out), blockIdx.y over the rows of a.",
    error_hints={
        "RaceError": "Threads read elements of the tile that other threads wrote: put cuda.syncthreads() "
                     "between filling the tile and reading it back transposed.",
        "WriteConflictError": "Two threads wrote the same element: check the indices. Thread (tx, ty) writes "
                              "tile[ty, tx] when loading and out[bx*32 + ty, by*32 + tx] when storing.",
        "UninitializedReadError": "A thread read a tile element nobody wrote. For edge tiles, only positions "
                                  "inside the output may be read back: guard the store. Check too that the "
                                  "load uses blockIdx.y for the rows of a and blockIdx.x for its columns.",
        "OutOfBoundsError": "Edge tiles stick out of the matrix: guard the load with the bounds of a and the "
                            "store with the bounds of out (out has shape (cols, rows)).",
    },
)


def check_transpose(kernel, seeds=None) -> None:
    """Check cell of the shared-memory transpose exercise."""
    task = TRANSPOSE.with_seeds(seeds) if seeds else TRANSPOSE
    check(task, {"kernel": kernel})


# ------------------------------------------------------------------------------------ sigmoid3_backward

def _sigmoid(x):
    with np.errstate(over="ignore"):  # exp(-x) is inf for x below about -709: sigmoid(x) is then 0
        return 1.0 / (1.0 + np.exp(-x))


def sigmoid3_backward_reference(x: np.ndarray, dout: np.ndarray) -> np.ndarray:
    """dx for out = sigmoid(sigmoid(sigmoid(x))), in float64."""
    x, dout = x.astype(np.float64), dout.astype(np.float64)
    s1 = _sigmoid(x)
    s2 = _sigmoid(s1)
    s3 = _sigmoid(s2)
    return dout * s3 * (1 - s3) * s2 * (1 - s2) * s1 * (1 - s1)


SIGMOID_FAMILIES = (
    Family("extremes", "x uniform in [-4, 4] with values where exp() overflows (±30, ±89, ±800, ±1e4, ±3e38) "
                       "at random places, the last element always among them; dout uniform in [-1, 1]"),
    Family("uniform", "x uniform in [-4, 4], dout uniform in [-1, 1]"),
    Family("wide", "x and dout of random signs, magnitudes log-uniform from 1e-30 to 3e38 (x) and 1e30 "
                   "(dout), a tenth of them 0"),
)


def sigmoid_inputs(n: int, seed: int) -> np.ndarray:
    """x for the sigmoid check: uniform in [-4, 4], with values where exp() overflows (EXTREME_X) at random
    places, the last element always among them."""
    rng = np.random.default_rng([seed, 4])
    x = rng.uniform(-4.0, 4.0, size=n)
    count = min(n, len(EXTREME_X), max(1, n // 4))
    places = np.append(rng.choice(n - 1, count - 1, replace=False), n - 1) if n > 1 else np.array([0])
    x[places] = rng.permutation(EXTREME_X)[:count] if n >= len(EXTREME_X) else rng.choice(EXTREME_X, count)
    return x.astype(np.float32)


def _sigmoid_args(case: Case) -> dict:
    """x and dout of the case's family ("extremes", the values the notebook's cases had, if none is named)."""
    n = case.params["n"]
    if case.inputs in ("extremes", ""):
        x, dout = sigmoid_inputs(n, case.seed), _random(n, case.seed, 5)
    elif case.inputs == "uniform":
        x = np.random.default_rng([case.seed, 4, 1]).uniform(-4.0, 4.0, size=n)
        dout = _random(n, case.seed, 5)
    elif case.inputs == "wide":
        rng = np.random.default_rng([case.seed, 4, 2])
        x, dout = signed_magnitudes(rng, n, (-30.0, 38.5)), signed_magnitudes(rng, n, (-30.0, 30.0))
    else:
        raise ValueError(f"no input family {case.inputs!r}")
    return {"x": x.astype(np.float32), "dout": dout.astype(np.float32), "dx": np.empty(n, np.float32)}


# |dx| is at most |dout| / 64: σ'(z) = σ(z)(1 - σ(z)) is at most 1/4 for each of the three factors
CHAIN_BOUND = 1 / 64
SIGMOID_THREADS = one_element_per_thread("x[i], dout[i] and dx[i]")

SIGMOID3_BACKWARD_CONTRACT = Contract(
    name="part04.sigmoid3_backward",
    sizes=_one_d_sizes("n"),
    inputs=SIGMOID_FAMILIES,
    method=method(
        (
            SIGMOID_THREADS[0],
            Budgeted("global_loads", "2 per element: x[i] and dout[i]",
                     "Read x[i] and dout[i] once each into local variables; recompute s1, s2 and s3 from x "
                     "in "
                     "registers instead of reading anything else, and do not read dx back."),
            Budgeted("global_stores", "1 per element: dx[i]",
                     "Multiply the chain together in a local variable and write dx[i] once at the end."),
            SIGMOID_THREADS[1],
            Budgeted("global_sectors", "coalesced accesses: thread i touches x[i], dout[i] and dx[i]",
                     "Thread i = cuda.grid(1) handles element i: neighbouring threads then touch "
                     "neighbouring "
                     "elements, the fewest 32-byte sectors.", most=Slack(0.25, lambda r, p: 2, "2")),
            Budgeted("global_requests", "one warp-wide access per load and store instruction of a warp",
                     "Read x[i] and dout[i] and write dx[i] once each.", most=Slack(0.25)),
        ),
        free=CHECK_LAUNCHES),
    solution=Solution(NOTEBOOK, (("kernel", "sigmoid3_backward"),)),
    examples=tuple({"n": n, "threads": t, "inputs": "extremes"}
                   for n, t in ((100, 64), (1000, 128), (1, 128), (7, 64), (31, 128), (33, 64), (257, 128)))
    + ({"n": 40, "threads": 24, "inputs": "uniform"}, {"n": 300, "threads": 100, "inputs": "wide"}),
    hidden_examples=tuple({"n": n, "threads": t, "inputs": "extremes"}
                          for n, t in ((129, 256), (500, 32), (64, 64), (70, 1024))),
    drawn=DRAWN,
    block_sizes="any number of threads from 1 to 1024, multiples of 32 or not",
    cost=lambda p: p["n"] + p["threads"],
)

SIGMOID3_BACKWARD = Task(
    name="sigmoid3_backward",
    cases=SIGMOID3_BACKWARD_CONTRACT.cases(),
    contract=SIGMOID3_BACKWARD_CONTRACT,
    make_args=_sigmoid_args,
    outputs=(Output("dx"),),
    reference=lambda case, args: {"dx": sigmoid3_backward_reference(args["x"], args["dout"])},
    configure=_one_d_launch("n"),
    scale=lambda case, args: {"dx": np.abs(args["dout"].astype(np.float64)) * CHAIN_BOUND},
    scale_words="(|dout| / 64, the most the chain of three derivatives makes of dout)",
    rtol=1e-5,
    atol=0.0,
    summary="one element per thread, 2 global reads and 1 write each (forward recomputed in registers, in "
            "float32)",
    more_hints=("i = cuda.grid(1); if i < x.size: one = float32(1.0); s1 = one / (one + math.exp(-x[i])), "
                "then s2 and s3 the same way from s1 and s2; dx[i] = dout[i] * s3 * (one - s3) * s2 * "
                "(one - s2) * s1 * (one - s1). A bare 1.0 is a float64 in Numba, and makes the whole chain "
                "float64.",),
    hint="With s1 = σ(x), s2 = σ(s1), s3 = σ(s2) and σ'(z) = σ(z)(1 - σ(z)): "
         "dx = dout · s3(1 - s3) · s2(1 - s2) · s1(1 - s1), in float32 (float32(1.0), not 1.0). Use "
         "math.exp, "
         "and i = cuda.grid(1): the check launches blocks of any size from 1 to 1024 threads.",
    unwritten_hint="Every i below x.size must write dx[i]: compute i with cuda.grid(1), not with a fixed "
                   "block size times blockIdx.x.",
    error_hints={
        "OutOfBoundsError": "The last block has threads past the end: guard with `if i < x.size:`.",
        "WriteConflictError": "Two threads wrote the same dx element: check the index; i = cuda.grid(1) "
                              "gives every thread its own element.",
    },
    nan_hint="Here x reaches ±3e38: write each derivative as σ(z)(1 - σ(z)) from σ(z) = 1 / (1 + exp(-z)), "
             "which stays finite, not as exp(-z) / (1 + exp(-z))², which is inf / inf when exp(-z) "
             "overflows.",
)


def check_sigmoid3_backward(kernel, seeds=None) -> None:
    """Check cell of the recomputation exercise (an overflow shows as NaN or infinity in the output, which
    the check reports; common.run keeps NumPy's warnings about it quiet)."""
    task = SIGMOID3_BACKWARD.with_seeds(seeds) if seeds else SIGMOID3_BACKWARD
    check(task, {"kernel": kernel})


def hint(name: str, level: int = 2) -> None:
    """Print hint ``level`` of a task of this notebook (level 1 is the one the check's messages show)."""
    print_hint(TASKS, name, level)


TASKS = (ADD_BIAS, TRANSPOSE, SIGMOID3_BACKWARD)
