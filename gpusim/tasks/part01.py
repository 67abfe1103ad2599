"""Checks for exercise notebook 01 (kernels in Python): a 1-D map, a 2-D map with flattened storage, naive
matmul."""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, Output, Task, check, make_cases

THREADS = 32  # threads per block for 1-D launches made by the checks
TILE = 16  # 2-D blocks are TILE x TILE
GRAY_WEIGHTS = (0.2989, 0.5870, 0.1140)


def _random(shape, seed: int, salt: int = 0) -> np.ndarray:
    return np.random.default_rng([seed, salt]).uniform(-1.0, 1.0, size=shape).astype(np.float32)


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


# ------------------------------------------------------------------------------------------- vector_add

def _vector_add_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": _random(n, case.seed, 1), "b": _random(n, case.seed, 2), "out": np.empty(n, np.float32)}


VECTOR_ADD = Task(
    name="vector_add",
    cases=make_cases([{"n": n} for n in (1, 7, 31, 32, 33, 100, 1000)]),
    make_args=_vector_add_args,
    outputs=(Output("out"),),
    reference=lambda case, args: {"out": args["a"].astype(np.float64) + args["b"]},
    configure=lambda case: (_cdiv(case.params["n"], THREADS), THREADS),
    rtol=1e-6,
    atol=1e-7,
    budgets=(
        Budget("global_loads", lambda p: 2 * p["n"], "global reads", "2 per element: a[i] and b[i]",
               "Each thread should read a[i] and b[i] once; threads past the end should read nothing."),
        Budget("global_stores", lambda p: p["n"], "global writes", "1 per element", "Write out[i] once."),
    ),
    summary="2 global reads and 1 write per element",
    hint="Thread i computes out[i] = a[i] + b[i], with i = cuda.grid(1) "
         "(block index × block size + thread index).",
    error_hints={"OutOfBoundsError": "The last block has threads past the end of the arrays: guard with "
                                     "`if i < out.size:` (n is not a multiple of the block size)."},
)


def check_vector_add(kernel, seeds=None) -> None:
    """Check cell of the vector_add exercise."""
    task = VECTOR_ADD.with_seeds(seeds) if seeds else VECTOR_ADD
    check(task, {"kernel": kernel})


# -------------------------------------------------------------------------------------------- grayscale

def _grayscale_args(case: Case) -> dict:
    height, width = case.params["height"], case.params["width"]
    rgb = np.random.default_rng([case.seed, 3]).uniform(0.0, 1.0, size=height * width * 3).astype(np.float32)
    return {"rgb": rgb, "gray": np.empty(height * width, np.float32), "height": height, "width": width}


def _grayscale_reference(case: Case, args: dict) -> dict:
    pixels = args["rgb"].astype(np.float64).reshape(-1, 3)
    return {"gray": pixels @ np.array(GRAY_WEIGHTS)}


GRAYSCALE = Task(
    name="grayscale",
    cases=make_cases([{"height": h, "width": w}
                      for h, w in ((1, 1), (3, 7), (16, 16), (5, 37), (19, 4), (17, 33), (40, 50))]),
    make_args=_grayscale_args,
    outputs=(Output("gray"),),
    reference=_grayscale_reference,
    launcher="launch_grayscale",
    rtol=1e-5,
    atol=1e-6,
    budgets=(
        Budget("global_loads", lambda p: 3 * p["height"] * p["width"], "global reads",
               "3 per pixel: its red, green and blue values",
               "Each thread reads the three channels of its own pixel once; threads outside the image "
               "read nothing."),
        Budget("global_stores", lambda p: p["height"] * p["width"], "global writes", "1 per pixel",
               "Write each gray pixel once."),
    ),
    summary="3 global reads and 1 write per pixel",
    hint="Pixel (row, col) is gray[row * width + col]; its channels are rgb[3*p], rgb[3*p + 1], rgb[3*p + 2] "
         "with p = row * width + col. Use x for columns and y for rows.",
    unwritten_hint="The grid must cover the whole image: cdiv(width, 16) blocks along x (columns) and "
                   "cdiv(height, 16) along y (rows).",
    error_hints={"OutOfBoundsError": "Threads of the edge blocks fall outside the image: guard both "
                                     "`row < height` and `col < width` (a pixel past the end of a row is not "
                                     "the next row's first pixel)."},
)


def check_grayscale(kernel, launcher, seeds=None) -> None:
    """Check cell of the grayscale exercise: the kernel together with the learner's launch function."""
    task = GRAYSCALE.with_seeds(seeds) if seeds else GRAYSCALE
    check(task, {"kernel": kernel, "launch": launcher})


# ----------------------------------------------------------------------------------------------- matmul

def _matmul_args(case: Case) -> dict:
    m, k, n = case.params["m"], case.params["k"], case.params["n"]
    return {"a": _random((m, k), case.seed, 4), "b": _random((k, n), case.seed, 5),
            "c": np.empty((m, n), np.float32)}


MATMUL = Task(
    name="matmul",
    cases=make_cases([{"m": m, "k": k, "n": n} for m, k, n in
                      ((1, 1, 1), (3, 5, 7), (16, 3, 16), (17, 4, 9), (5, 2, 40), (20, 33, 18))]),
    make_args=_matmul_args,
    outputs=(Output("c"),),
    reference=lambda case, args: {"c": args["a"].astype(np.float64) @ args["b"].astype(np.float64)},
    configure=lambda case: ((_cdiv(case.params["n"], TILE), _cdiv(case.params["m"], TILE)), (TILE, TILE)),
    rtol=1e-4,
    atol=1e-5,
    budgets=(
        Budget("global_loads", lambda p: 2 * p["m"] * p["n"] * p["k"], "global reads",
               "2·k per output element: a row of a and a column of b",
               "Accumulate in a local variable and read each a[row, j] and b[j, col] once per output."),
        Budget("global_stores", lambda p: p["m"] * p["n"], "global writes", "1 per output element",
               "Write c[row, col] once, after the loop."),
    ),
    summary="2·k global reads and 1 write per output element",
    hint="c[row, col] = sum over j of a[row, j] * b[j, col], for j from 0 to a.shape[1] - 1; "
         "row comes from the y indices, col from the x indices.",
    error_hints={"OutOfBoundsError": "Edge blocks have threads outside c: guard with "
                                     "`if row < c.shape[0] and col < c.shape[1]:`."},
)


def check_matmul(kernel, seeds=None) -> None:
    """Check cell of the naive matmul exercise."""
    task = MATMUL.with_seeds(seeds) if seeds else MATMUL
    check(task, {"kernel": kernel})


TASKS = (VECTOR_ADD, GRAYSCALE, MATMUL)
