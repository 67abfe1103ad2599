"""Checks for exercise notebook 05 (tiled matrix multiplication): static shared-memory tiles, dynamic shared
memory with a run-time tile width, and a kernel factory specialised per tile width.

The read budget is the tiling math of the lesson, counted exactly for sizes that do not divide into tiles:
a block loads its rows of ``a`` and its columns of ``b`` once, storing 0.0 instead of reading for tile
elements outside the matrices, so ``a`` (M x K) is read once per block column and ``b`` (K x N) once per block
row:
``cdiv(N, T)·M·K + cdiv(M, T)·K·N`` global reads, which is ``2·M·N·K/T`` when T divides every size.

The method is enforced beyond reads: the shared memory a block holds (two T x T tiles, static for the static
kernel and the factory, none static for the dynamic one), two barriers per tile step over ``cdiv(K, T)``
steps, and the accesses of the busiest thread (one element of each tile per step, T of each in the inner
product). Shapes make each dimension in turn the largest (K past M and N rounded up to whole tiles, so a
loop to M or N fails), include 1s, primes, sizes just past a tile and a K above 128; the first case of every
check is an ordinary uneven one, so that a wrong index shows as wrong values rather than as a budget.
"""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, CheckFailed, Output, Task, check, make_cases

TILE = 16  # tile width of the static exercise; its block is TILE x TILE threads
FLOAT_BYTES = 4
# (m, k, n): ordinary first; then K, M and N in turn the largest; small, one tile, ones, K > 128
SIZES = ((17, 20, 9), (9, 45, 7), (40, 9, 17), (7, 18, 41), (5, 3, 7), (16, 16, 16), (1, 1, 1), (3, 131, 2))
HIDDEN_SIZES = ((1, 33, 1), (70, 1, 3), (2, 5, 67), (31, 29, 37))
WIDTHS = (8, 16)  # the dynamic and factory kernels are checked at these tile widths
HIDDEN_WIDTH = 12  # and the hidden tests at this one too
# the factory's kernels repeat the static exercise at each width: the shapes that make every bound matter
FACTORY_SIZES = tuple(size for size in SIZES if size not in ((5, 3, 7), (16, 16, 16)))
FACTORY_HIDDEN_SIZES = ((1, 33, 1), (31, 29, 37))
DYNAMIC_SIZES = tuple((m, k, n, t) for t in WIDTHS for m, k, n in SIZES[:5]) + ((1, 1, 1, 8), (3, 131, 2, 16))
DYNAMIC_HIDDEN_SIZES = ((16, 16, 16, 16), (70, 1, 3, 8), (1, 33, 1, 16), (31, 29, 37, HIDDEN_WIDTH))

NOT_IMPLEMENTED_FACTORY = ("make_tiled_matmul: not implemented yet. Replace `raise NotImplementedError()` in "
                           "the solution cell with your code, run that cell, then run this check again.")


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def tiled_read_budget(m: int, k: int, n: int, t: int) -> int:
    """Global reads of a tiled matmul that loads each in-range tile element once per block."""
    return _cdiv(n, t) * m * k + _cdiv(m, t) * k * n


def thread_access_budget(k: int, t: int) -> int:
    """Element accesses of the busiest thread: per tile step at most 2 global reads, 2 shared writes and 2·t
    shared reads; then one write of c."""
    return _cdiv(k, t) * (2 * t + 4) + 1


def matmul_inputs(m: int, k: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """a (m x k) and b (k x n), uniform in [-1, 1], with a row of a and a column of b all zero (so a row and
    a column of c are exactly 0) where there are 3 or more of them."""
    rng = np.random.default_rng([seed, 6])
    a = rng.uniform(-1.0, 1.0, size=(m, k)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, size=(k, n)).astype(np.float32)
    if m >= 3:
        a[rng.integers(m)] = 0.0
    if n >= 3:
        b[:, rng.integers(n)] = 0.0
    return a, b


def _width(p: dict, fixed: int | None) -> int:
    return p["t"] if fixed is None else fixed


def _args(case: Case) -> dict:
    p = case.params
    a, b = matmul_inputs(p["m"], p["k"], p["n"], case.seed)
    args = {"a": a, "b": b, "c": np.empty((p["m"], p["n"]), np.float32)}
    if "t" in p:  # the dynamic kernel takes the tile width as its last argument
        args["t"] = p["t"]
    return args


def _reference(case: Case, args: dict) -> dict:
    return {"c": args["a"].astype(np.float64) @ args["b"].astype(np.float64)}


HINT = ("For each tile step k0 = 0, T, 2T, ... below K = a.shape[1] (the dimension a and b share, not M or "
        "N): thread (ty, tx) stores a[row, k0 + tx] into sA[ty, tx] and b[k0 + ty, col] into sB[ty, tx] (0.0 "
        "where the index is outside the matrix), waits at a barrier, adds sA[ty, j] * sB[j, tx] for j in "
        "range(T), and waits again before the next step overwrites the tiles. row = by·T + ty and "
        "col = bx·T + tx; the tiles and the sum are float32.")
UNWRITTEN = ("The grid has one thread per element of c, rounded up to whole tiles: every thread with row < m "
             "and col < n must write c[row, col] = acc, whatever the value of acc, and c is not zero "
             "beforehand (the check fills it with NaN): sum in a local variable, write once.")
GUARDS = ("Guard every global load (row < m and k0 + tx < k for a; k0 + ty < k and col < n for b) and the "
          "final store (row < m and col < n).")
ERROR_HINTS = {
    "RaceError": "Two barriers per tile step: one after filling the tiles (before anyone reads them) and one "
                 "after the inner product (before the next step overwrites them).",
    "WriteConflictError": "Two threads wrote the same element: each thread owns c[by·T + ty, bx·T + tx] and "
                          "stores only sA[ty, tx] and sB[ty, tx]; check that row uses ty and col uses tx.",
    "UninitializedReadError": "Edge tiles: where row >= M or k0 + tx >= K (and likewise for b), store 0.0 "
                              "into the shared tile instead of skipping the store, so the inner product "
                              "reads zeros.",
    "BarrierError": "Every thread of the block must reach every cuda.syncthreads(): keep the barriers "
                    "outside `if row < m and col < n:` and never return early.",
    "OutOfBoundsError": GUARDS + " Index the tiles with tx, ty and j < TILE only.",
}
DYNAMIC_ERROR_HINTS = {
    **ERROR_HINTS,
    "RaceError": ERROR_HINTS["RaceError"] + " Check also that sA and sB do not overlap: sA is "
                                            "shared[0 : t*t] and sB starts right after it, at shared[t*t].",
    "OutOfBoundsError": "If the index is in the dynamic array: the check launches with exactly 2·t·t·4 bytes "
                        "(the launch above says how many), room for two t × t float32 tiles and no more, so "
                        "compute every index into it and the start of sB (t*t) from the argument t, never "
                        "from TILE or a fixed number. Otherwise: " + GUARDS,
}
FACTORY_ERROR_HINTS = {
    **ERROR_HINTS,
    "UninitializedReadError": "Use the factory's T everywhere in the kernel (tile shapes, indices, loop "
                              "steps), not a fixed TILE. " + ERROR_HINTS["UninitializedReadError"],
    "OutOfBoundsError": "Use the factory's T everywhere in the kernel (tile shapes, indices, loop steps), "
                        "not a fixed TILE. " + GUARDS,
}
T_EVERYWHERE = " Use the factory's T everywhere in the kernel (tile shapes, indices, loop steps), not TILE."


class _Launch:
    """The launch configuration of a case: one T x T block per output tile (plus 2·T·T floats if dynamic)."""

    def __init__(self, fixed: int | None):
        self.fixed = fixed

    def __call__(self, case: Case) -> tuple:
        p = case.params
        t = _width(p, self.fixed)
        config = ((_cdiv(p["n"], t), _cdiv(p["m"], t)), (t, t))
        return config if self.fixed else config + (0, 2 * t * t * FLOAT_BYTES)


def _shared_budgets(fixed: int | None, factory: bool) -> tuple[Budget, ...]:
    """Static shared memory: two T x T float32 tiles (a padding column each allowed), or none at all for the
    dynamic kernel, whose tiles live in the memory the launch sizes."""
    if fixed is None:
        return (Budget("static_shared_bytes", lambda p: 0, "bytes of static shared memory per block",
                       "none: both tiles live in the dynamic array, sized by the launch",
                       "Take both tiles from shared = cuda.shared.array(0, float32): sA is shared[0 : t*t], "
                       "sB is shared[t*t : 2*t*t]. A static cuda.shared.array((16, 16), ...) has a size "
                       "fixed when the kernel is compiled, which is what this exercise replaces."),)
    tiles = f"two {fixed} × {fixed} float32 tiles"
    shape = "T" if factory else "TILE"
    return (
        Budget("static_shared_bytes", lambda p: 2 * fixed * fixed * FLOAT_BYTES,
               "bytes of static shared memory per block", f"{tiles}, sA and sB",
               f"Declare sA and sB with cuda.shared.array(({shape}, {shape}), float32) and stage each tile "
               f"step in them: the inner product then reads shared memory, not global memory.",
               at_least=True),
        Budget("static_shared_bytes", lambda p: 2 * fixed * (fixed + 1) * FLOAT_BYTES,
               "bytes of static shared memory per block", f"{tiles}, with one padding column each at most",
               f"Size the tiles ({shape}, {shape})"
               + (", with the factory's T, not a fixed 16 or TILE: the kernel for T = 8 needs a quarter of "
                  "the 16 × 16 kernel's memory. " if factory else ". ")
               + "A block only needs the current tile step of a and b; shared memory a block holds but does "
                 "not need limits how many blocks fit on a multiprocessor."),
    )


def _task(name: str, fixed: int | None, factory: bool = False) -> Task:
    """The task for a fixed tile width or, with ``fixed=None``, for a width t carried by each case."""
    if fixed is None:
        sizes = [{"m": m, "k": k, "n": n, "t": t} for m, k, n, t in DYNAMIC_SIZES]
        hidden = tuple({"m": m, "k": k, "n": n, "t": t} for m, k, n, t in DYNAMIC_HIDDEN_SIZES)
    else:
        shapes, hidden_shapes = (FACTORY_SIZES, FACTORY_HIDDEN_SIZES) if factory else (SIZES, HIDDEN_SIZES)
        sizes = [{"m": m, "k": k, "n": n} for m, k, n in shapes]
        hidden = tuple({"m": m, "k": k, "n": n} for m, k, n in hidden_shapes)

    def read_limit(p: dict) -> int:
        return tiled_read_budget(p["m"], p["k"], p["n"], _width(p, fixed))

    def barrier_limit(p: dict) -> int:
        return 2 * _cdiv(p["k"], _width(p, fixed))

    def access_limit(p: dict) -> int:
        return thread_access_budget(p["k"], _width(p, fixed))

    hints = DYNAMIC_ERROR_HINTS if fixed is None else FACTORY_ERROR_HINTS if factory else ERROR_HINTS
    return Task(
        name=name,
        cases=make_cases(sizes),
        hidden_sizes=hidden,
        make_args=_args,
        outputs=(Output("c"),),
        reference=_reference,
        configure=_Launch(fixed),
        rtol=1e-4,
        atol=1e-5,
        budgets=(
            *_shared_budgets(fixed, factory),
            Budget("global_loads", read_limit, "global reads",
                   "each in-range element of a and b loaded once per block: cdiv(N,T)·M·K + cdiv(M,T)·K·N, "
                   "which is 2·M·N·K/T when T divides the sizes",
                   "Each thread loads ONE element of the a tile and ONE of the b tile per step into shared "
                   "memory (sA[ty, tx] from a[row, k0 + tx], sB[ty, tx] from b[k0 + ty, col]); the inner "
                   "product then reads only shared memory. Store 0.0 for elements outside the matrices "
                   "without reading global memory."),
            Budget("global_stores", lambda p: p["m"] * p["n"], "global writes", "1 per element of c",
                   "Accumulate in a local variable and write c[row, col] once, after the loop over tiles."),
            Budget("max_block_barriers", barrier_limit, "barrier steps in its busiest block",
                   "two per tile step, over cdiv(K, T) steps",
                   "One cuda.syncthreads() after filling the tiles and one after the inner product, none "
                   "inside the inner loop; the tile loop runs over K = a.shape[1], the dimension a and b "
                   "share, not over M or N."),
            Budget("max_thread_accesses", access_limit, "element accesses in its busiest thread",
                   "per tile step at most 2 global reads, 2 shared writes and 2·T shared reads, over "
                   "cdiv(K, T) steps, then 1 write of c",
                   "Every thread loads one element of each tile per step (no loop over the tile: the block "
                   "has a thread for each element) and reads T elements of each in the inner product; the "
                   "tile loop runs over K = a.shape[1], not over M or N."),
        ),
        summary="two tiles of shared memory, two barriers per tile step, within "
                "cdiv(N,T)·M·K + cdiv(M,T)·K·N global reads (2·M·N·K/T) and 1 write per element",
        hint=HINT + (T_EVERYWHERE if factory else ""),
        unwritten_hint=UNWRITTEN + (T_EVERYWHERE if factory else ""),
        error_hints=hints,
    )


TILED_MATMUL = _task("tiled_matmul", TILE)
TILED_MATMUL_DYNAMIC = _task("tiled_matmul_dynamic", None)


def factory_task(width: int) -> Task:
    """The check of the kernel make_tiled_matmul(width) returns."""
    return _task(f"make_tiled_matmul({width})", width, factory=True)


def check_tiled_matmul(kernel, seeds=None) -> None:
    """Check cell of the static shared-memory tiled matmul (16 x 16 tiles)."""
    check(TILED_MATMUL.with_seeds(seeds) if seeds else TILED_MATMUL, {"kernel": kernel})


def check_tiled_matmul_dynamic(kernel, seeds=None) -> None:
    """Check cell of the dynamic shared-memory version: launched with 2·t·t·4 bytes, at widths 8 and 16 (and,
    in the hidden tests, 12)."""
    check(TILED_MATMUL_DYNAMIC.with_seeds(seeds) if seeds else TILED_MATMUL_DYNAMIC, {"kernel": kernel})


def check_make_tiled_matmul(make_kernel, seeds=None) -> None:
    """Check cell of the kernel factory: make_kernel(T) returns a kernel for T x T tiles, at widths 8 and 16
    (and, in the hidden tests, 12)."""
    if not callable(make_kernel):
        raise CheckFailed("make_tiled_matmul should be a function that takes the tile width T and returns a "
                          "kernel.")
    widths = WIDTHS + ((HIDDEN_WIDTH,) if seeds else ())
    kernels = {}
    for width in widths:
        try:
            kernels[width] = make_kernel(width)
        except NotImplementedError:
            raise CheckFailed(NOT_IMPLEMENTED_FACTORY) from None
        if kernels[width] is None:
            raise CheckFailed(f"make_tiled_matmul({width}) returned None: return the @cuda.jit kernel you "
                              f"defined inside the factory.")
    for width in widths:
        task = factory_task(width)
        check(task.with_seeds(seeds) if seeds else task, {"kernel": kernels[width]}, quiet=True)
    cases = len(FACTORY_SIZES) + (len(FACTORY_HIDDEN_SIZES) if seeds else 0)
    print(f"✓ make_tiled_matmul: the kernels for T = {', '.join(map(str, widths))} each passed {cases} cases "
          f"(m, k, n from 1 to 131), with two tiles of shared memory, two barriers per tile step and the "
          f"tiled read budget.")


TASKS = (TILED_MATMUL, TILED_MATMUL_DYNAMIC, factory_task(WIDTHS[0]), factory_task(WIDTHS[1]))
