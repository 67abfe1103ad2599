"""Checks for exercise notebook 04 (what makes kernels fast): a coalesced bias add, a transpose through padded
shared memory, and a fused sigmoid backward that recomputes instead of storing.

Budgets are on gpusim's counters: ``global_sectors`` (distinct 32-byte segments per warp-level access),
``bank_conflicts`` and global loads/stores. Sector budgets are computed here, exactly, from the access pattern
of a well-coalesced kernel with the same launch, so a kernel meets them when its warps touch neighbouring
addresses and misses them by several times when they do not.
"""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, Output, Task, check, make_cases

WARP = 32
SECTOR_BYTES = 32
FLOAT_BYTES = 4
BIAS_THREADS = 128  # threads per block of the bias-add launch (1-D)
TILE = 32  # transpose tile: 32 x 32 threads per block, one element each


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


ADD_BIAS = Task(
    name="add_bias",
    cases=make_cases([{"rows": r, "cols": c}
                      for r, c in ((1, 1), (3, 5), (8, 32), (7, 37), (20, 33), (33, 64))]),
    make_args=_bias_args,
    outputs=(Output("out"),),
    reference=lambda case, args: {"out": args["a"].astype(np.float64) + args["bias"].astype(np.float64)},
    configure=lambda case: (_cdiv(case.params["rows"] * case.params["cols"], BIAS_THREADS), BIAS_THREADS),
    rtol=1e-6,
    atol=1e-7,
    budgets=(
        Budget("global_loads", lambda p: 2 * p["rows"] * p["cols"], "global reads",
               "2 per element: a[row, col] and bias[col]"),
        Budget("global_stores", lambda p: p["rows"] * p["cols"], "global writes", "1 per element"),
        Budget("global_sectors", _bias_sector_budget, "32-byte sectors",
               "what a warp of 32 consecutive threads touching 32 consecutive elements of a row-major array "
               "needs: 4 sectors per array per warp, plus a few where a warp crosses a row end",
               "Neighbouring threads (consecutive i) must touch neighbouring addresses. In a row-major array "
               "neighbours along a row are adjacent in memory: take col = i % cols and row = i // cols, "
               "not the other way round."),
    ),
    summary="coalesced: 4 sectors per array per warp",
    hint="Thread i handles one element: row = i // cols, col = i % cols, "
         "out[row, col] = a[row, col] + bias[col].",
    error_hints={"OutOfBoundsError": "The grid has more threads than elements: guard with "
                                     "`if i < rows * cols:` before touching memory."},
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


TRANSPOSE = Task(
    name="transpose",
    cases=make_cases([{"rows": r, "cols": c} for r, c in ((1, 1), (3, 5), (32, 32), (33, 47), (64, 40))]),
    make_args=_transpose_args,
    outputs=(Output("out"),),
    reference=lambda case, args: {"out": args["a"].astype(np.float64).T},
    configure=lambda case: ((_cdiv(case.params["cols"], TILE), _cdiv(case.params["rows"], TILE)),
                            (TILE, TILE)),
    exact=True,
    budgets=(
        Budget("global_loads", lambda p: p["rows"] * p["cols"], "global reads", "1 per element"),
        Budget("global_stores", lambda p: p["rows"] * p["cols"], "global writes", "1 per element"),
        Budget("global_sectors", transpose_sector_budget, "32-byte sectors",
               "coalesced reads of `a` and coalesced writes of `out`: a warp's 32 threads touch 32 "
               "neighbouring "
               "elements of one row, for both arrays",
               "Reading a[y, x] with x from threadIdx.x is coalesced, but writing out[x, y] sends each "
               "thread of "
               "a warp to a different row of out. Stage the tile in shared memory, then let threadIdx.x run "
               "along the rows of out when writing: "
               "out[block_x * 32 + ty, block_y * 32 + tx] = tile[tx, ty]."),
        Budget("bank_conflicts", lambda p: 0, "shared-memory bank conflicts", "none: every warp-level access "
               "to the tile should touch 32 different banks",
               "Reading tile[tx, ty] walks down a column: with 32 floats per row every element of a column "
               "is in the same bank (a 32-way conflict). Pad the rows to 33 floats: "
               "cuda.shared.array((32, 33), float32)."),
    ),
    summary="coalesced reads and writes, no bank conflicts",
    hint="out[j, i] = a[i, j]. The block at (blockIdx.x, blockIdx.y) reads the tile of a at rows "
         "blockIdx.y*32 + ty, columns blockIdx.x*32 + tx, and writes it to out at rows blockIdx.x*32 + ty, "
         "columns blockIdx.y*32 + tx.",
    unwritten_hint="Every thread whose output position (row < out.shape[0], column < out.shape[1]) is "
                   "valid must "
                   "write it, even if its input position (the one it loaded) is outside a: the guards for "
                   "loading and for storing are different.",
    error_hints={
        "RaceError": "Threads read elements of the tile that other threads wrote: put cuda.syncthreads() "
                     "between filling the tile and reading it back transposed.",
        "UninitializedReadError": "A thread read a tile element nobody wrote. For edge tiles, only positions "
                                  "inside the output may be read back: guard the store.",
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
    return 1.0 / (1.0 + np.exp(-x))


def sigmoid3_backward_reference(x: np.ndarray, dout: np.ndarray) -> np.ndarray:
    """dx for out = sigmoid(sigmoid(sigmoid(x))), in float64."""
    x, dout = x.astype(np.float64), dout.astype(np.float64)
    s1 = _sigmoid(x)
    s2 = _sigmoid(s1)
    s3 = _sigmoid(s2)
    return dout * s3 * (1 - s3) * s2 * (1 - s2) * s1 * (1 - s1)


def _sigmoid_args(case: Case) -> dict:
    n = case.params["n"]
    return {"x": _random(n, case.seed, 4) * 4, "dout": _random(n, case.seed, 5),
            "dx": np.empty(n, np.float32)}


SIGMOID3_BACKWARD = Task(
    name="sigmoid3_backward",
    cases=make_cases([{"n": n} for n in (1, 7, 31, 32, 33, 100, 1000)]),
    make_args=_sigmoid_args,
    outputs=(Output("dx"),),
    reference=lambda case, args: {"dx": sigmoid3_backward_reference(args["x"], args["dout"])},
    configure=lambda case: (_cdiv(case.params["n"], BIAS_THREADS), BIAS_THREADS),
    rtol=1e-4,
    atol=1e-7,
    budgets=(
        Budget("global_loads", lambda p: 2 * p["n"], "global reads", "2 per element: x[i] and dout[i]",
               "Read x[i] and dout[i] once each into local variables; recompute s1, s2 and s3 from x in "
               "registers instead of reading anything else, and do not read dx back."),
        Budget("global_stores", lambda p: p["n"], "global writes", "1 per element: dx[i]",
               "Multiply the chain together in a local variable and write dx[i] once at the end."),
    ),
    summary="2 global reads and 1 write per element (forward recomputed in registers)",
    hint="With s1 = σ(x), s2 = σ(s1), s3 = σ(s2) and σ'(z) = σ(z)(1 - σ(z)): "
         "dx = dout · s3(1 - s3) · s2(1 - s2) · s1(1 - s1). Use math.exp.",
    error_hints={"OutOfBoundsError": "The last block has threads past the end: guard with `if i < x.size:`."},
)


def check_sigmoid3_backward(kernel, seeds=None) -> None:
    """Check cell of the recomputation exercise."""
    task = SIGMOID3_BACKWARD.with_seeds(seeds) if seeds else SIGMOID3_BACKWARD
    check(task, {"kernel": kernel})


TASKS = (ADD_BIAS, TRANSPOSE, SIGMOID3_BACKWARD)
