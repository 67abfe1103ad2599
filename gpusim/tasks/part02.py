"""Checks for exercise notebook 02 (shared memory and barriers): a block sum, a stencil with a shared-memory
halo, and a race to find and fix in a block scan."""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, Output, Task, check, make_cases

THREADS = 32  # threads per block in every launch of this part
RADIUS = 2  # the stencil reads RADIUS neighbours on each side

SIZES = (1, 7, 31, 32, 33, 100, 257, 1000)


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _random(n: int, seed: int, salt: int) -> np.ndarray:
    return np.random.default_rng([seed, salt]).uniform(-1.0, 1.0, size=n).astype(np.float32)


def _launch(case: Case) -> tuple:
    return (_cdiv(case.params["n"], THREADS), THREADS)


BARRIER_HINTS = {
    "RaceError": "Threads of a block read shared memory that other threads write in the same phase. Put "
                 "cuda.syncthreads() between the writes and the reads that depend on them.",
    "BarrierError": "Every thread of a block must reach the same cuda.syncthreads() calls: keep the barrier "
                    "outside any `if` that only some threads enter (and never `return` before a barrier).",
    "UninitializedReadError": "A thread read a shared-memory slot nobody wrote. Threads past the end of the "
                              "input still have to write their slot: store 0 there.",
}


# -------------------------------------------------------------------------------------------- block_sum

def _block_sum_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": _random(n, case.seed, 1), "partial": np.empty(_cdiv(n, THREADS), np.float32)}


def _block_sum_reference(case: Case, args: dict) -> dict:
    a = args["a"].astype(np.float64)
    padded = np.zeros(_cdiv(a.size, THREADS) * THREADS)
    padded[: a.size] = a
    return {"partial": padded.reshape(-1, THREADS).sum(axis=1)}


BLOCK_SUM = Task(
    name="block_sum",
    cases=make_cases([{"n": n} for n in SIZES]),
    make_args=_block_sum_args,
    outputs=(Output("partial"),),
    reference=_block_sum_reference,
    configure=_launch,
    rtol=1e-5,
    atol=1e-5,
    budgets=(
        Budget("global_loads", lambda p: p["n"], "global reads", "1 per input element",
               "Each thread reads its one element of a into shared memory; all later reads are from shared."),
        Budget("global_stores", lambda p: _cdiv(p["n"], THREADS), "global writes", "1 per block",
               "Only thread 0 of each block writes partial[blockIdx.x]."),
    ),
    summary="1 global read per element and 1 write per block",
    hint="partial[b] is the sum of a[32*b : 32*b + 32]; elements past the end of a count as 0.",
    error_hints=BARRIER_HINTS,
)


def check_block_sum(kernel, seeds=None) -> None:
    """Check cell of the block_sum exercise."""
    check(BLOCK_SUM.with_seeds(seeds) if seeds else BLOCK_SUM, {"kernel": kernel})


# ---------------------------------------------------------------------------------------------- stencil

def _stencil_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": _random(n, case.seed, 2), "out": np.empty(n, np.float32)}


def _stencil_reference(case: Case, args: dict) -> dict:
    a = args["a"].astype(np.float64)
    padded = np.concatenate([np.zeros(RADIUS), a, np.zeros(RADIUS)])
    return {"out": sum(padded[k: k + a.size] for k in range(2 * RADIUS + 1))}


def _stencil_read_budget(p: dict) -> int:
    return p["n"] + 2 * RADIUS * _cdiv(p["n"], THREADS)


STENCIL = Task(
    name="window_sum",
    cases=make_cases([{"n": n} for n in SIZES]),
    make_args=_stencil_args,
    outputs=(Output("out"),),
    reference=_stencil_reference,
    configure=_launch,
    rtol=1e-5,
    atol=1e-6,
    budgets=(
        Budget("global_loads", _stencil_read_budget, "global reads",
               f"each element once, plus the 2·RADIUS = {2 * RADIUS} halo elements of each block",
               "Load the block's tile and its halo into shared memory once, then read the window from shared "
               "memory: a thread must not read its neighbours from global memory."),
        Budget("global_stores", lambda p: p["n"], "global writes", "1 per element", "Write out[i] once."),
    ),
    summary=f"at most 1 global read per element plus {2 * RADIUS} per block, 1 write per element",
    hint=f"out[i] = a[i-{RADIUS}] + ... + a[i+{RADIUS}], where elements outside 0..n-1 count as 0. In shared "
         f"memory, a[i] sits at tile[t + RADIUS]; tile[0:RADIUS] is the left halo, "
         f"tile[RADIUS + THREADS:] the right halo.",
    error_hints=BARRIER_HINTS,
)


def check_window_sum(kernel, seeds=None) -> None:
    """Check cell of the window_sum (stencil with halo) exercise."""
    check(STENCIL.with_seeds(seeds) if seeds else STENCIL, {"kernel": kernel})


# ------------------------------------------------------------------------------------------- block_scan

def _scan_args(case: Case) -> dict:
    n = case.params["n"]
    return {"a": _random(n, case.seed, 3), "out": np.empty(n, np.float32)}


def _scan_reference(case: Case, args: dict) -> dict:
    a = args["a"].astype(np.float64)
    out = np.empty_like(a)
    for start in range(0, a.size, THREADS):
        out[start: start + THREADS] = np.cumsum(a[start: start + THREADS])
    return {"out": out}


BLOCK_SCAN = Task(
    name="block_scan",
    cases=make_cases([{"n": n} for n in SIZES]),
    make_args=_scan_args,
    outputs=(Output("out"),),
    reference=_scan_reference,
    configure=_launch,
    rtol=1e-5,
    atol=1e-5,
    budgets=(
        Budget("global_loads", lambda p: p["n"], "global reads", "1 per element",
               "Read a[i] once into shared memory."),
        Budget("global_stores", lambda p: p["n"], "global writes", "1 per element", "Write out[i] once."),
    ),
    summary="1 global read and 1 write per element",
    hint="out[i] is the sum of a[start .. i], where start = 32 * (i // 32) is the first element of i's "
         "block.",
    error_hints={
        **BARRIER_HINTS,
        "RaceError": "In one step, thread t reads tile[t - offset] while thread t - offset updates that same "
                     "slot. Read the value into a local variable, cuda.syncthreads(), then add it, then "
                     "cuda.syncthreads() again before the next step.",
    },
)


def check_block_scan(kernel, seeds=None) -> None:
    """Check cell of the find-and-fix-the-race exercise (block_scan)."""
    check(BLOCK_SCAN.with_seeds(seeds) if seeds else BLOCK_SCAN, {"kernel": kernel})


TASKS = (BLOCK_SUM, STENCIL, BLOCK_SCAN)
