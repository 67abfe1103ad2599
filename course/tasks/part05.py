"""Checks for exercise notebook 05 (tiled matrix multiplication): static shared-memory tiles, dynamic shared
memory with a run-time tile width, and a kernel factory specialised per tile width.

Each task has a contract (:mod:`course.tasks.contract`): the domain (any M, K and N from 1 up; for the
dynamic kernel any tile width t from 1 to 32, so blocks of t × t threads that are not multiples of a warp
too), the input families of :data:`course.tasks.inputs.MATMUL_FAMILIES`, float32 storage and arithmetic, and
the method as limits on every gpusim counter against the reference solution of ``solutions/05_tiled_matmul``
on the same case: shared memory bounded on both sides, global reads, 32-byte sectors and bank conflicts
included. The explicit examples make each dimension in turn the largest (K past M and N rounded up to whole
tiles, so a loop to M or N fails), include 1s, primes, sizes just past a tile and a K above 128; the first
case of every check is an ordinary uneven one, so that a wrong index shows as wrong values rather than as a
budget. The drawn cases go up to K = 1024.

The read budget is the tiling math of the lesson, counted exactly for sizes that do not divide into tiles:
a block loads its rows of ``a`` and its columns of ``b`` once, storing 0.0 instead of reading for tile
elements outside the matrices, so ``a`` (M x K) is read once per block column and ``b`` (K x N) once per block
row: ``cdiv(N, T)·M·K + cdiv(M, T)·K·N`` global reads, which is ``2·M·N·K/T`` when T divides every size.
"""

from __future__ import annotations

import numpy as np

from .common import Case, CheckFailed, Output, Task, check, print_hint
from .contract import EXACT, Budgeted, Contract, Size, Slack, Solution, draw_sizes, method
from .inputs import MATMUL_FAMILIES, matmul_pair, matmul_scale

TILE = 16  # tile width of the static exercise; its block is TILE x TILE threads
FLOAT_BYTES = 4
MAX_WIDTH = 32  # a t x t block has at most 1024 threads
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
# What simulating a case costs, in units of one to two microseconds of CPU (gpusim, checked): per tile step
# of a block, STEP_COST and T³ (T·T threads, T multiply-adds each). Drawn cases stay under DRAWN_COST, with
# at most 48 rows and columns, 4 blocks a side, and K up to 1024.
STEP_COST, DRAWN_COST = 700, 60_000
DRAWN_SIDE, DRAWN_BLOCKS_PER_SIDE, DRAWN_K = 48, 4, 1024
DRAWN = 2  # cases drawn per check and set of seeds, on top of the explicit ones
FACTORY_DRAWN = 2  # per width of the factory

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
    return _uniform(m, k, n, np.random.default_rng([seed, 6]))


def _uniform(m: int, k: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
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
    rng = np.random.default_rng([case.seed, 6])
    a, b = matmul_pair(case.inputs or "uniform", p["m"], p["k"], p["n"], rng, _uniform)
    args = {"a": a, "b": b, "c": np.empty((p["m"], p["n"]), np.float32)}
    if "t" in p:  # the dynamic kernel takes the tile width as its last argument
        args["t"] = p["t"]
    return args


def _reference(case: Case, args: dict) -> dict:
    return {"c": args["a"].astype(np.float64) @ args["b"].astype(np.float64)}


def _scale(case: Case, args: dict) -> dict:
    return {"c": matmul_scale(args["a"], args["b"])}


# ------------------------------------------------------------------------------------------------ domain

def case_cost(p: dict, t: int) -> int:
    """What simulating a case costs, roughly (see STEP_COST): its blocks' tile steps, T³ + STEP_COST each."""
    return _cdiv(p["m"], t) * _cdiv(p["n"], t) * _cdiv(p["k"], t) * (t ** 3 + STEP_COST)


def _sizes(fixed: int | None) -> tuple[Size, ...]:
    """k, m and n (the width t first, for the dynamic kernel), drawn small enough that a case costs at most
    DRAWN_COST to simulate: k first, as if m and n took one block each (so that long K comes up often),
    then m, then n within what is left."""
    def top(side: str):
        def most(p: dict) -> int:
            t = _width(p, fixed)
            blocks = DRAWN_COST // case_cost({"m": 1, "n": 1, "k": 1, **p, side: 1}, t)
            return min(DRAWN_K if side == "k" else min(DRAWN_SIDE, DRAWN_BLOCKS_PER_SIDE * t), t * blocks)
        return most

    sizes = (Size("k", 1, None, top("k"), "the shared dimension"),
             Size("m", 1, None, top("m"), "rows of a and c"),
             Size("n", 1, None, top("n"), "columns of b and c"))
    if fixed is None:
        sizes = (Size("t", 1, MAX_WIDTH, MAX_WIDTH, "the tile width: blocks of t × t threads"), *sizes)
    return sizes


# ------------------------------------------------------------------------------------------------ method

READS_HINT = ("Each thread loads ONE element of the a tile and ONE of the b tile per step into shared memory "
              "(sA[ty, tx] from a[row, k0 + tx], sB[ty, tx] from b[k0 + ty, col]); the inner product then "
              "reads only shared memory. Store 0.0 for elements outside the matrices without reading global "
              "memory.")
COALESCED = ("coalesced tile loads: the threads of a warp (consecutive tx) read consecutive elements of a "
             "row of a and of b")
COALESCED_HINT = ("Thread (ty, tx) reads a[row, k0 + tx] and b[k0 + ty, col]: tx, which neighbouring threads "
                  "differ in, must index the last (contiguous) dimension of both loads.")
CONFLICTS = "tiles written and read without bank conflicts: sA[ty, tx] and sB[ty, tx] written row by row"
CONFLICTS_HINT = ("Store each element where the thread's own (ty, tx) says, sA[ty, tx] = ... and "
                  "sB[ty, tx] = ...: a warp's 32 stores then fall in 32 different banks. sA[tx, ty] puts "
                  "them in a few banks, one after the other.")
BARRIERS = "two per tile step, over cdiv(K, T) steps"
BARRIERS_HINT = ("One cuda.syncthreads() after filling the tiles and one after the inner product, none "
                 "inside the inner loop; the tile loop runs over K = a.shape[1], the dimension a and b "
                 "share, not over M or N.")
ACCESSES_HINT = ("Every thread loads one element of each tile per step (no loop over the tile: the block has "
                 "a thread for each element) and reads T elements of each in the inner product; the tile "
                 "loop runs over K = a.shape[1], not over M or N.")
STORES_HINT = "Accumulate in a local variable and write c[row, col] once, after the loop over tiles."


def _shared_budget(fixed: int | None, factory: bool) -> Budgeted:
    """Static shared memory: two T x T float32 tiles (a padding column each allowed), or none at all for the
    dynamic kernel, whose tiles live in the memory the launch sizes."""
    if fixed is None:
        return Budgeted("static_shared_bytes",
                        "none: both tiles live in the dynamic array, sized by the launch",
                        "Take both tiles from shared = cuda.shared.array(0, float32): sA is shared[0 : t*t], "
                        "sB is shared[t*t : 2*t*t]. A static cuda.shared.array((16, 16), ...) has a size "
                        "fixed when the kernel is compiled, which is what this exercise "
                        "replaces.", least=EXACT)
    shape = "T" if factory else "TILE"
    return Budgeted(
        "static_shared_bytes",
        f"two {fixed} × {fixed} float32 tiles, sA and sB (a padding column each at most)",
        f"Declare sA and sB with cuda.shared.array(({shape}, {shape}), float32) and stage one tile step at a "
        f"time in them"
        + (", with the factory's T, not a fixed 16 or TILE: the kernel for T = 8 needs a quarter of the "
           "16 × 16 kernel's memory. " if factory else ". ")
        + "A block only needs the current tile step of a and b; shared memory a block holds but does not "
          "need limits how many blocks fit on a multiprocessor.",
        most=Slack(extra=lambda reference, p: 2 * fixed * FLOAT_BYTES, words="one padding column per tile"),
        least=EXACT)


def _method(fixed: int | None, factory: bool):
    def reads(p: dict) -> str:
        return (f"each in-range element of a and b loaded once per block: cdiv(N,T)·M·K + cdiv(M,T)·K·N = "
                f"{tiled_read_budget(p['m'], p['k'], p['n'], _width(p, fixed))} here (2·M·N·K/T when T "
                f"divides the sizes)")

    def accesses(p: dict) -> str:
        return (f"per tile step at most 2 global reads, 2 shared writes and 2·T shared reads, over "
                f"cdiv(K, T) steps, then 1 write of c: {thread_access_budget(p['k'], _width(p, fixed))} here")

    dynamic = ("the check launches with exactly 2·t·t·4 bytes" if fixed is None else
               "the check launches with none")
    return method(
        (
            _shared_budget(fixed, factory),
            Budgeted("global_loads", reads, READS_HINT),
            Budgeted("global_stores", "1 per element of c", STORES_HINT),
            Budgeted("max_block_barriers", BARRIERS, BARRIERS_HINT),
            Budgeted("max_thread_accesses", accesses, ACCESSES_HINT),
            Budgeted("global_sectors", COALESCED, COALESCED_HINT,
                     most=Slack(0.25, lambda reference, p: 2, "2")),
            Budgeted("global_requests", COALESCED, COALESCED_HINT, most=Slack(0.25)),
            Budgeted("bank_conflicts", CONFLICTS, CONFLICTS_HINT,
                     most=Slack(extra=lambda reference, p: reference["shared_stores"] // 16,
                                words="2 per 32 shared writes, what a padding column costs")),
            Budgeted("shared_requests", CONFLICTS, CONFLICTS_HINT, most=Slack(0.25)),
            Budgeted("active_threads", "every thread of a block storing its elements of both tiles", "",
                     most=None, least=EXACT),
        ),
        free={"blocks": "the check launches the kernel itself, one block per tile of c",
              "threads": "the check launches the kernel itself, T × T threads a block",
              "dynamic_shared_bytes": dynamic})


# ---------------------------------------------------------------------------------------- hints, diagnoses

HINT = ("A tiled matmul walks K in steps of T. In each step the block copies a T × T tile of a and one of b "
        "into shared memory, every thread one element of each (0.0 outside the matrices), waits at a "
        "barrier, adds T products read from the tiles, and waits again before the next step overwrites them. "
        "The tiles and the sum are float32.")
RECIPE = ("For each tile step k0 = 0, T, 2T, ... below K = a.shape[1] (the dimension a and b share, not M or "
          "N): thread (ty, tx) stores a[row, k0 + tx] into sA[ty, tx] and b[k0 + ty, col] into sB[ty, tx] "
          "(0.0 where the index is outside the matrix), waits at a barrier, adds sA[ty, j] * sB[j, tx] for j "
          "in range(T), and waits again before the next step overwrites the tiles. row = by·T + ty and col = "
          "bx·T + tx; the tiles and the sum are float32: acc = float32(0.0).")
DERIVATION = ("Where the budgets come from. A block computes a T × T tile of c and needs rows by·T .. "
              "by·T+T-1 of a and columns bx·T .. bx·T+T-1 of b, all of K: cdiv(K, T) steps. Each in-range "
              "element of those rows and columns is read once per block, so a (M × K) is read once per block "
              "column, cdiv(N, T) times, and b once per block row: cdiv(N,T)·M·K + cdiv(M,T)·K·N reads, "
              "2·M·N·K/T when T divides the sizes, instead of 2·M·N·K for the naive kernel. Each step costs "
              "two barriers and each thread 2 global reads, 2 shared writes and 2·T shared reads. The warp "
              "(32 consecutive threads, tx fastest) reads a[row, k0 .. k0+T-1]: T consecutive floats, the "
              "fewest 32-byte sectors; and writes sA[ty, 0 .. T-1]: consecutive words, each in its own bank.")
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


def _early_stop(fixed: int | None):
    """Diagnosis: c holds the sum over only the first L terms of K, a multiple of T (the tile loop ended
    early, or dropped the last partial tile)."""
    def diagnose(task: Task, case: Case, result: dict, facts: dict) -> str | None:
        if "expected" not in facts or result.get("error"):
            return None
        p, t = case.params, _width(case.params, fixed)
        a, b = facts["args"]["a"].astype(np.float64), facts["args"]["b"].astype(np.float64)
        got = np.asarray(result["outputs"]["c"], np.float64)
        scale = matmul_scale(a, b)
        for steps in range(_cdiv(p["k"], t) - 1, 0, -1):
            partial = a[:, : steps * t] @ b[: steps * t]
            if not np.allclose(partial, facts["expected"]["c"]) and \
                    (np.abs(got - partial) <= task.rtol * scale + task.atol).all():
                return (f"c holds the sums over the first {steps * t} of the K = {p['k']} terms: the tile "
                        f"loop stopped after {steps} of its cdiv(K, T) = {_cdiv(p['k'], t)} steps. It must "
                        f"run over K = a.shape[1], the last partial tile included.")
        return None
    return diagnose


def _tile_layout(task: Task, case: Case, result: dict, facts: dict) -> str | None:
    """Diagnosis from the counters: tiles read column by column (sectors) or stored transposed (banks)."""
    counter = facts.get("counter")
    if counter not in ("global_sectors", "global_requests", "bank_conflicts", "shared_requests"):
        return None
    used, reference = facts["profile"], facts["reference"]
    ratio = used["global_sectors"] / max(1, reference["global_sectors"])
    conflicts = used["bank_conflicts"] - reference["bank_conflicts"]
    parts = []
    if ratio > 1.25:
        parts.append(f"the tile loads move {ratio:.1f}× the reference's 32-byte sectors: a tile is read "
                     f"column by column (neighbouring threads, consecutive tx, read elements a row apart)")
    if conflicts > 0:
        parts.append(f"{conflicts} more bank conflicts than the reference: a tile is stored (or read) "
                     f"transposed, as sA[tx, ty], so a warp's accesses pile up in a few banks")
    return "; ".join(parts) + "." if parts else None


def _shared_size(task: Task, case: Case, result: dict, facts: dict) -> str | None:
    """Diagnosis: the static shared memory is a multiple of what two float32 tiles take."""
    if facts.get("counter") != "static_shared_bytes" or not facts["reference"]["static_shared_bytes"]:
        return None
    ratio = facts["used"] / facts["reference"]["static_shared_bytes"]
    if abs(ratio - 2) < 0.2:
        return ("twice the reference's shared memory: float64 tiles (8 bytes an element) or two copies of "
                "each tile.")
    if ratio > 2:
        return (f"{ratio:.0f}× the reference's shared memory: the block holds more than one tile step of a "
                f"and b at once (all of K?), where one T × T tile of each is enough.")
    return None


# ------------------------------------------------------------------------------------------------- tasks

class _Launch:
    """The launch configuration of a case: one T x T block per output tile (plus 2·T·T floats if dynamic)."""

    def __init__(self, fixed: int | None):
        self.fixed = fixed

    def __call__(self, case: Case) -> tuple:
        p = case.params
        t = _width(p, self.fixed)
        config = ((_cdiv(p["n"], t), _cdiv(p["m"], t)), (t, t))
        return config if self.fixed else config + (0, 2 * t * t * FLOAT_BYTES)


def _contract(name: str, fixed: int | None, factory: bool, explicit: bool) -> Contract:
    if fixed is None:
        examples = tuple({"m": m, "k": k, "n": n, "t": t} for m, k, n, t in DYNAMIC_SIZES)
        hidden = tuple({"m": m, "k": k, "n": n, "t": t} for m, k, n, t in DYNAMIC_HIDDEN_SIZES)
    else:
        shapes, hidden_shapes = (FACTORY_SIZES, FACTORY_HIDDEN_SIZES) if factory else (SIZES, HIDDEN_SIZES)
        examples = tuple({"m": m, "k": k, "n": n} for m, k, n in shapes)
        hidden = tuple({"m": m, "k": k, "n": n} for m, k, n in hidden_shapes)
    if factory:
        solution = Solution("05_tiled_matmul", (("kernel", "make_tiled_matmul"),),
                            build=lambda objects: {"kernel": objects["kernel"](fixed)})
    else:
        solution = Solution("05_tiled_matmul", (("kernel", name),))
    return Contract(
        name=f"part05.{name}",
        sizes=_sizes(fixed),
        inputs=MATMUL_FAMILIES,
        method=_method(fixed, factory),
        solution=solution,
        examples=examples if explicit else (),
        hidden_examples=hidden if explicit else (),
        drawn=FACTORY_DRAWN if factory else DRAWN,
        cost=lambda p: case_cost(p, _width(p, fixed)),
        block_sizes=("T × T threads, T = 16 (TILE)" if fixed == TILE and not factory else
                     "t × t threads for any t from 1 to 32" if fixed is None else
                     f"T × T threads, T = {fixed}: the factory is checked at several T from 1 to 32"),
    )


def _task(name: str, fixed: int | None, factory: bool = False, explicit: bool = True) -> Task:
    """The task for a fixed tile width or, with ``fixed=None``, for a width t carried by each case; without
    the explicit examples where ``explicit`` is False."""
    contract = _contract(name, fixed, factory, explicit)
    hints = DYNAMIC_ERROR_HINTS if fixed is None else FACTORY_ERROR_HINTS if factory else ERROR_HINTS
    return Task(
        name=name,
        cases=contract.cases(),
        contract=contract,
        make_args=_args,
        outputs=(Output("c"),),
        reference=_reference,
        scale=_scale,
        scale_words="(|a| @ |b|)",
        configure=_Launch(fixed),
        rtol=1e-4,
        atol=0.0,
        summary="two tiles of shared memory, two barriers per tile step, within "
                "cdiv(N,T)·M·K + cdiv(M,T)·K·N global reads (2·M·N·K/T) and 1 write per element, coalesced "
                "and free of bank conflicts like the reference solution",
        hint=HINT + (T_EVERYWHERE if factory else ""),
        more_hints=(RECIPE + (T_EVERYWHERE if factory else ""), DERIVATION),
        diagnoses=(_early_stop(fixed), _tile_layout, _shared_size),
        unwritten_hint=UNWRITTEN + (T_EVERYWHERE if factory else ""),
        error_hints=hints,
    )


TILED_MATMUL = _task("tiled_matmul", TILE)
TILED_MATMUL_DYNAMIC = _task("tiled_matmul_dynamic", None)


def factory_task(width: int, explicit: bool = True) -> Task:
    """The check of the kernel make_tiled_matmul(width) returns: the explicit examples and drawn cases, or
    (at a drawn width, where the hand-picked shapes would take thousands of small blocks) drawn cases only."""
    return _task(f"make_tiled_matmul({width})", width, factory=True, explicit=explicit)


def factory_tasks(seeds=None) -> tuple[Task, ...]:
    """The factory check's tasks: T = 8 and 16 and, in the hidden tests, 12 and one T drawn from 1 to 32."""
    if not seeds:
        return tuple(factory_task(width) for width in WIDTHS)
    explicit = WIDTHS + (HIDDEN_WIDTH,)
    (drawn, _), = draw_sizes("part05.make_tiled_matmul.widths", (Size("T", 1, MAX_WIDTH, MAX_WIDTH),), ("",),
                             lambda p: p["T"] not in explicit, tuple(seeds), 1)
    tasks = (*(factory_task(width) for width in explicit), factory_task(drawn["T"], explicit=False))
    return tuple(task.with_seeds(seeds) for task in tasks)


def _factory_width(task: Task) -> int:
    return int(task.name[task.name.index("(") + 1:-1])


def check_tiled_matmul(kernel, seeds=None) -> None:
    """Check cell of the static shared-memory tiled matmul (16 x 16 tiles)."""
    check(TILED_MATMUL.with_seeds(seeds) if seeds else TILED_MATMUL, {"kernel": kernel})


def check_tiled_matmul_dynamic(kernel, seeds=None) -> None:
    """Check cell of the dynamic shared-memory version: launched with 2·t·t·4 bytes, at widths 8 and 16, and
    drawn widths from 1 to 32."""
    check(TILED_MATMUL_DYNAMIC.with_seeds(seeds) if seeds else TILED_MATMUL_DYNAMIC, {"kernel": kernel})


def check_make_tiled_matmul(make_kernel, seeds=None) -> None:
    """Check cell of the kernel factory: make_kernel(T) returns a kernel for T x T tiles, at widths 8 and 16
    (and, in the hidden tests, 12 and one drawn width)."""
    if not callable(make_kernel):
        raise CheckFailed("make_tiled_matmul should be a function that takes the tile width T and returns a "
                          "kernel.")
    tasks = factory_tasks(seeds)
    widths = [_factory_width(task) for task in tasks]
    kernels = {}
    for width in widths:
        try:
            kernels[width] = make_kernel(width)
        except NotImplementedError:
            raise CheckFailed(NOT_IMPLEMENTED_FACTORY) from None
        if kernels[width] is None:
            raise CheckFailed(f"make_tiled_matmul({width}) returned None: return the @cuda.jit kernel you "
                              f"defined inside the factory.")
    for task, width in zip(tasks, widths, strict=True):
        check(task, {"kernel": kernels[width]}, quiet=True)
    cases = sum(len(task.cases) for task in tasks)
    print(f"✓ make_tiled_matmul: the kernels for T = {', '.join(map(str, widths))} passed {cases} cases in "
          f"all (m, n from 1 to 48 or more, K up to 1024), with two tiles of shared memory, two barriers per "
          f"tile step, and the reads, sectors and bank conflicts of the reference solution.")


def hint(name: str, level: int = 2) -> None:
    """Print hint ``level`` of a task of this notebook (level 1 is the one the check's messages show)."""
    print_hint(TASKS, name, level)


TASKS = (TILED_MATMUL, TILED_MATMUL_DYNAMIC, factory_task(WIDTHS[0]), factory_task(WIDTHS[1]))
