"""Checks for exercise notebook 05 (tiled matrix multiplication): static shared-memory tiles, dynamic shared
memory with a run-time tile width, and a kernel factory specialised per tile width.

The read budget is the tiling math of the lesson, counted exactly for sizes that do not divide into tiles:
a block loads its rows of ``a`` and its columns of ``b`` once, storing 0.0 instead of reading for tile
elements outside the matrices, so ``a`` (M x K) is read once per block column and ``b`` (K x N) once per block
row:
``cdiv(N, T)·M·K + cdiv(M, T)·K·N`` global reads, which is ``2·M·N·K/T`` when T divides every size.
"""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, CheckFailed, Output, Task, check, make_cases

TILE = 16  # tile width of the static exercise; its block is TILE x TILE threads
FLOAT_BYTES = 4
SIZES = ((1, 1, 1), (5, 3, 7), (16, 16, 16), (17, 20, 9), (33, 18, 40), (12, 40, 21))  # (m, k, n)
WIDTHS = (8, 16)  # the dynamic and factory kernels are checked at these tile widths

NOT_IMPLEMENTED_FACTORY = ("make_tiled_matmul: not implemented yet. Replace `raise NotImplementedError()` in "
                           "the solution cell with your code, run that cell, then run this check again.")


def _random(shape, seed: int, salt: int) -> np.ndarray:
    return np.random.default_rng([seed, salt]).uniform(-1.0, 1.0, size=shape).astype(np.float32)


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def tiled_read_budget(m: int, k: int, n: int, t: int) -> int:
    """Global reads of a tiled matmul that loads each in-range tile element once per block."""
    return _cdiv(n, t) * m * k + _cdiv(m, t) * k * n


def _width(p: dict, fixed: int | None) -> int:
    return p["t"] if fixed is None else fixed


def _args(case: Case) -> dict:
    p = case.params
    m, k, n = p["m"], p["k"], p["n"]
    args = {"a": _random((m, k), case.seed, 6), "b": _random((k, n), case.seed, 7),
            "c": np.empty((m, n), np.float32)}
    if "t" in p:  # the dynamic kernel takes the tile width as its last argument
        args["t"] = p["t"]
    return args


def _reference(case: Case, args: dict) -> dict:
    return {"c": args["a"].astype(np.float64) @ args["b"].astype(np.float64)}


HINT = ("For each tile step k0 = 0, T, 2T, ...: thread (ty, tx) stores a[row, k0 + tx] into sA[ty, tx] and "
        "b[k0 + ty, col] into sB[ty, tx] (0.0 where the index is outside the matrix), waits at a barrier, "
        "adds sA[ty, j] * sB[j, tx] for j in range(T), and waits again before the next step "
        "overwrites the tiles.")
ERROR_HINTS = {
    "RaceError": "Two barriers per tile step: one after filling the tiles (before anyone reads them) and one "
                 "after the inner product (before the next step overwrites them). With dynamic shared "
                 "memory, also check that sA and sB do not overlap: sB starts t*t floats after sA.",
    "UninitializedReadError": "Edge tiles: where row >= M or k0 + tx >= K (and likewise for b), store 0.0 "
                              "into the shared tile instead of skipping the store, so the inner product "
                              "reads zeros.",
    "BarrierError": "Every thread of the block must reach every cuda.syncthreads(): keep the barriers "
                    "outside `if row < m and col < n:` and never return early.",
    "OutOfBoundsError": "Guard every global load (row < m and k0 + tx < k for a; k0 + ty < k and col < n for "
                        "b) and the final store (row < m and col < n).",
}

FACTORY_ERROR_HINTS = {
    **ERROR_HINTS,
    "UninitializedReadError": "Use the factory's T everywhere in the kernel (tile shapes, indices, loop "
                              "steps), not a fixed TILE. " + ERROR_HINTS["UninitializedReadError"],
}


class _Launch:
    """The launch configuration of a case: one T x T block per output tile (plus 2·T·T floats if dynamic)."""

    def __init__(self, fixed: int | None):
        self.fixed = fixed

    def __call__(self, case: Case) -> tuple:
        p = case.params
        t = _width(p, self.fixed)
        config = ((_cdiv(p["n"], t), _cdiv(p["m"], t)), (t, t))
        return config if self.fixed else config + (0, 2 * t * t * FLOAT_BYTES)


def _task(name: str, fixed: int | None) -> Task:
    """The task for a fixed tile width or, with ``fixed=None``, for a width t carried by each case."""
    if fixed is None:
        sizes = [{"m": m, "k": k, "n": n, "t": t} for t in WIDTHS for m, k, n in SIZES[1:5]]
    else:
        sizes = [{"m": m, "k": k, "n": n} for m, k, n in SIZES]

    def read_limit(p: dict) -> int:
        return tiled_read_budget(p["m"], p["k"], p["n"], _width(p, fixed))

    return Task(
        name=name,
        cases=make_cases(sizes),
        make_args=_args,
        outputs=(Output("c"),),
        reference=_reference,
        configure=_Launch(fixed),
        rtol=1e-4,
        atol=1e-5,
        budgets=(
            Budget("global_loads", read_limit, "global reads",
                   "each in-range element of a and b loaded once per block: cdiv(N,T)·M·K + cdiv(M,T)·K·N, "
                   "which is 2·M·N·K/T when T divides the sizes",
                   "Each thread loads ONE element of the a tile and ONE of the b tile per step into shared "
                   "memory; the inner product then reads only shared memory. Store 0.0 for elements outside "
                   "the matrices without reading global memory."),
            Budget("global_stores", lambda p: p["m"] * p["n"], "global writes", "1 per element of c",
                   "Accumulate in a local variable and write c[row, col] once, after the loop over tiles."),
        ),
        summary="within cdiv(N,T)·M·K + cdiv(M,T)·K·N global reads (2·M·N·K/T) and 1 write per element",
        hint=HINT,
        unwritten_hint="The grid has one thread per element of c, rounded up to whole tiles: every thread "
                       "with row < m and col < n must write c[row, col].",
        error_hints=ERROR_HINTS if not name.startswith("make_") else FACTORY_ERROR_HINTS,
    )


TILED_MATMUL = _task("tiled_matmul", TILE)
TILED_MATMUL_DYNAMIC = _task("tiled_matmul_dynamic", None)


def check_tiled_matmul(kernel, seeds=None) -> None:
    """Check cell of the static shared-memory tiled matmul (16 x 16 tiles)."""
    check(TILED_MATMUL.with_seeds(seeds) if seeds else TILED_MATMUL, {"kernel": kernel})


def check_tiled_matmul_dynamic(kernel, seeds=None) -> None:
    """Check cell of the dynamic shared-memory version: launched with 2·t·t·4 bytes, at widths 8 and 16."""
    check(TILED_MATMUL_DYNAMIC.with_seeds(seeds) if seeds else TILED_MATMUL_DYNAMIC, {"kernel": kernel})


def check_make_tiled_matmul(make_kernel, seeds=None) -> None:
    """Check cell of the kernel factory: make_kernel(T) returns a kernel for T x T tiles, at two widths."""
    if not callable(make_kernel):
        raise CheckFailed("make_tiled_matmul should be a function that takes the tile width T and returns a "
                          "kernel.")
    kernels = {}
    for width in WIDTHS:
        try:
            kernels[width] = make_kernel(width)
        except NotImplementedError:
            raise CheckFailed(NOT_IMPLEMENTED_FACTORY) from None
        if kernels[width] is None:
            raise CheckFailed(f"make_tiled_matmul({width}) returned None: return the @cuda.jit kernel you "
                              f"defined inside the factory.")
    for width in WIDTHS:
        task = _task(f"make_tiled_matmul({width})", width)
        check(task.with_seeds(seeds) if seeds else task, {"kernel": kernels[width]}, quiet=True)
    print(f"✓ make_tiled_matmul: the kernels for T = {' and '.join(map(str, WIDTHS))} each passed "
          f"{len(SIZES)} cases (m, k, n from 1 to 40), within the tiled read budget.")


TASKS = (TILED_MATMUL, TILED_MATMUL_DYNAMIC)
