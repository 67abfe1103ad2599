"""Checks for exercise notebook 04 (what makes kernels fast): a coalesced bias add, a transpose through padded
shared memory, and a fused sigmoid backward that recomputes instead of storing.

Budgets are on gpusim's counters: ``global_sectors`` (distinct 32-byte segments per warp-level access),
``bank_conflicts``, global loads/stores and ``max_thread_accesses`` (one element per thread: a kernel where a
few threads loop over the work is told so). Sector budgets are computed here, exactly, from the access pattern
of a well-coalesced kernel with the same launch, so a kernel meets them when its warps touch neighbouring
addresses and misses them by several times when they do not.

The shapes make every shortcut visible: each dimension in turn the larger one, a grid with more blocks along
one axis than the other, sizes past 128 (twice a hard-coded 64), and two block sizes for the 1-D kernels (a
hard-coded ``blockIdx.x * 128`` fails). The sigmoid inputs include |x| up to 3e38, where exp() overflows.
"""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, Output, Task, check, make_cases

WARP = 32
SECTOR_BYTES = 32
FLOAT_BYTES = 4
TILE = 32  # transpose tile: 32 x 32 threads per block, one element each
# (x values where exp() overflows, in float32 above 88.7 and in float64 above 709, then tame ones)
EXTREME_X = (-3.0e38, 3.0e38, -1.0e4, 1.0e4, -800.0, 800.0, -120.0, 120.0, -89.0, 89.0, -30.0, 30.0, 0.0)


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


def one_element_per_thread(elements, accesses: int, names: str) -> tuple[Budget, Budget]:
    """Budgets of a kernel with one thread per element: every element has a thread that works, and no thread
    makes more than ``accesses`` element accesses (``names`` says which)."""
    hint = ("Each thread handles exactly one element, the one at i = cuda.grid(1), with no loop over "
            "elements: the launch already has a thread for every element, and a few threads doing all the "
            "work leave the rest of the GPU idle.")
    return (Budget("active_threads", elements, "threads that touched memory", "one thread per element", hint,
                   at_least=True),
            Budget("max_thread_accesses", lambda p: accesses, "element accesses in its busiest thread",
                   f"one element per thread: {names}", hint))


# ------------------------------------------------------------------------------------------------ add_bias

def _bias_args(case: Case) -> dict:
    rows, cols = case.params["rows"], case.params["cols"]
    return {"a": _random((rows, cols), case.seed, 1), "bias": _random(cols, case.seed, 2),
            "out": np.empty((rows, cols), np.float32)}


def _bias_sector_budget(p: dict) -> int:
    """Sectors of the coalesced mapping: warp w holds flat elements 32w .. 32w+31 of a, out and their bias."""
    rows, cols = p["rows"], p["cols"]
    n = rows * cols
    warps = [np.arange(start, min(start + WARP, n)) for start in range(0, n, WARP)]
    return 2 * warp_sectors(warps) + warp_sectors([w % cols for w in warps])


BIAS_THREADS = one_element_per_thread(lambda p: p["rows"] * p["cols"], 6, "a[row, col], bias[col] and "
                                      "out[row, col], with room for staging a few more")

ADD_BIAS = Task(
    name="add_bias",
    cases=make_cases([{"rows": r, "cols": c, "threads": t}
                      for r, c, t in ((20, 33, 128), (33, 20, 64), (3, 5, 64), (1, 1, 128), (3, 131, 64),
                                      (131, 2, 128), (8, 32, 128))]),
    hidden_sizes=tuple({"rows": r, "cols": c, "threads": t}
                       for r, c, t in ((70, 3, 256), (2, 257, 32), (1, 67, 64), (67, 1, 128))),
    make_args=_bias_args,
    outputs=(Output("out"),),
    reference=lambda case, args: {"out": args["a"].astype(np.float64) + args["bias"].astype(np.float64)},
    configure=_one_d_launch("elements"),
    rtol=1e-6,
    atol=1e-7,
    budgets=(
        BIAS_THREADS[0],
        Budget("global_loads", lambda p: 2 * p["rows"] * p["cols"], "global reads",
               "2 per element: a[row, col] and bias[col]"),
        Budget("global_stores", lambda p: p["rows"] * p["cols"], "global writes", "1 per element"),
        BIAS_THREADS[1],
        Budget("global_sectors", _bias_sector_budget, "32-byte sectors",
               "what a warp of 32 consecutive threads touching 32 consecutive elements of a row-major array "
               "needs: 4 sectors per array per warp, plus a few where a warp crosses a row end",
               "Neighbouring threads (consecutive i) must touch neighbouring addresses. In a row-major array "
               "neighbours along a row are adjacent in memory: take col = i % cols and row = i // cols, "
               "not the other way round."),
    ),
    summary="one element per thread, coalesced: 4 sectors per array per warp",
    hint="Thread i handles one element: row = i // cols, col = i % cols (cols = a.shape[1], for every shape, "
         "not only square ones), out[row, col] = a[row, col] + bias[col]. Compute i with cuda.grid(1): the "
         "check launches blocks of different sizes.",
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

def _transpose_args(case: Case) -> dict:
    rows, cols = case.params["rows"], case.params["cols"]
    return {"a": _random((rows, cols), case.seed, 3), "out": np.empty((cols, rows), np.float32)}


def transpose_sector_budget(p: dict) -> int:
    """Coalesced reads of a (rows x cols) and coalesced writes of out (cols x rows), in 32-wide tiles."""
    rows, cols = p["rows"], p["cols"]
    return warp_sectors(_row_chunks(rows, cols)) + warp_sectors(_row_chunks(cols, rows))


TRANSPOSE_ONE_EACH = ("Every thread of the 32 × 32 block moves one element: thread (tx, ty) loads "
                      "a[by*32 + ty, bx*32 + tx] into tile[ty, tx] and, after the barrier, writes "
                      "tile[tx, ty] to out[bx*32 + ty, by*32 + tx]. No loops: a few threads copying the "
                      "whole tile leave the others idle.")

TRANSPOSE = Task(
    name="transpose",
    cases=make_cases([{"rows": r, "cols": c}
                      for r, c in ((70, 33), (33, 70), (3, 5), (1, 1), (32, 32), (1, 40), (40, 1))]),
    hidden_sizes=tuple({"rows": r, "cols": c} for r, c in ((65, 2), (3, 67))),
    make_args=_transpose_args,
    outputs=(Output("out"),),
    reference=lambda case, args: {"out": args["a"].astype(np.float64).T},
    configure=lambda case: ((_cdiv(case.params["cols"], TILE), _cdiv(case.params["rows"], TILE)),
                            (TILE, TILE)),
    exact=True,
    budgets=(
        Budget("active_threads", lambda p: p["rows"] * p["cols"], "threads that touched memory",
               "one thread per element", TRANSPOSE_ONE_EACH, at_least=True),
        Budget("global_loads", lambda p: p["rows"] * p["cols"], "global reads", "1 per element"),
        Budget("global_stores", lambda p: p["rows"] * p["cols"], "global writes", "1 per element"),
        Budget("max_thread_accesses", lambda p: 4, "element accesses in its busiest thread",
               "one element per thread: read a, write the tile, read the tile, write out",
               TRANSPOSE_ONE_EACH),
        Budget("global_sectors", transpose_sector_budget, "32-byte sectors",
               "coalesced reads of `a` and coalesced writes of `out`: a warp's 32 threads touch 32 "
               "neighbouring elements of one row, for both arrays",
               "Reading a[y, x] with x from threadIdx.x is coalesced, but writing out[x, y] sends each "
               "thread of a warp to a different row of out. Stage the tile in shared memory, then let "
               "threadIdx.x run along the rows of out when writing: "
               "out[block_x * 32 + ty, block_y * 32 + tx] = tile[tx, ty]."),
        Budget("bank_conflicts", lambda p: 0, "shared-memory bank conflicts", "none: every warp-level access "
               "to the tile should touch 32 different banks",
               "Reading tile[tx, ty] walks down a column: with 32 floats per row every element of a column "
               "is in the same bank (a 32-way conflict). Pad the rows to 33 floats: "
               "cuda.shared.array((32, 33), float32)."),
    ),
    summary="one element per thread, coalesced reads and writes, no bank conflicts",
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
    n = case.params["n"]
    return {"x": sigmoid_inputs(n, case.seed), "dout": _random(n, case.seed, 5),
            "dx": np.empty(n, np.float32)}


SIGMOID_THREADS = one_element_per_thread(lambda p: p["n"], 3, "x[i], dout[i] and dx[i]")

SIGMOID3_BACKWARD = Task(
    name="sigmoid3_backward",
    cases=make_cases([{"n": n, "threads": t}
                      for n, t in ((100, 64), (1000, 128), (1, 128), (7, 64), (31, 128), (33, 64),
                                   (257, 128))]),
    hidden_sizes=tuple({"n": n, "threads": t} for n, t in ((129, 256), (500, 32), (64, 64))),
    make_args=_sigmoid_args,
    outputs=(Output("dx"),),
    reference=lambda case, args: {"dx": sigmoid3_backward_reference(args["x"], args["dout"])},
    configure=_one_d_launch("n"),
    rtol=1e-4,
    atol=1e-7,
    budgets=(
        SIGMOID_THREADS[0],
        Budget("global_loads", lambda p: 2 * p["n"], "global reads", "2 per element: x[i] and dout[i]",
               "Read x[i] and dout[i] once each into local variables; recompute s1, s2 and s3 from x in "
               "registers instead of reading anything else, and do not read dx back."),
        Budget("global_stores", lambda p: p["n"], "global writes", "1 per element: dx[i]",
               "Multiply the chain together in a local variable and write dx[i] once at the end."),
        SIGMOID_THREADS[1],
    ),
    summary="one element per thread, 2 global reads and 1 write each (forward recomputed in registers)",
    hint="With s1 = σ(x), s2 = σ(s1), s3 = σ(s2) and σ'(z) = σ(z)(1 - σ(z)): "
         "dx = dout · s3(1 - s3) · s2(1 - s2) · s1(1 - s1). Use math.exp, and i = cuda.grid(1): the check "
         "launches blocks of different sizes.",
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


TASKS = (ADD_BIAS, TRANSPOSE, SIGMOID3_BACKWARD)
