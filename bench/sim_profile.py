"""Where gpusim spends its time on bench/sim_speed.py's tiled matmul (16x16 tiles), three ways.

    python bench/sim_profile.py 128         # N=128; add more sizes as arguments

1. The vector engine (gpusim's default), by switching parts off (CPU seconds, best of 3): an unchecked launch
   (the kernel's Python once per wave, on NumPy arrays, plus the order check); a checked launch that hands
   the checker nothing (adds logging the accesses); one whose checker drops what it is handed (adds putting
   the accesses in the thread engine's order); a full checked launch (adds the checker and the counters).
2. The thread engine (engine="thread"), the same way: the kernel body run per thread on plain NumPy arrays
   with no simulator at all; an unchecked launch (adds barriers and scheduling); a checked launch whose
   checker drops the log (adds checked element access and logging); a full checked launch (adds the
   checker's epoch analysis and the counters).
3. The thread engine under cProfile, its own time summed by part (cProfile inflates every Python call, so
   these shares overstate the parts made of many small calls; the second split is the one to quote).
"""

import cProfile
import pstats
import sys
import time

import numpy as np
from numba import float32

import gpusim
from bench.sim_speed import TILE, inputs, matmul_tiled
from gpusim import checker, wave

PARTS = [
    ("kernel code (the learner's Python, NumPy scalar arithmetic)",
     lambda path, name: path.endswith("sim_speed.py")),
    ("checked element access (bounds, index arithmetic, access log)",
     lambda path, name: path.endswith("arrays.py") or name in (
         "<method 'append' of 'array.array' objects>", "<built-in method sys._getframe>")),
    ("barriers and scheduling (greenlet switches or generator resumes, hand-over, sites)",
     lambda path, name: path.endswith(("scheduler.py", "sites.py", "context.py", "generators.py"))
     or name.startswith(("<method 'switch' of 'greenlet", "<method 'send' of 'generator"))),
    ("checker: epoch analysis (races, uninitialised reads, other blocks)",
     lambda path, name: path.endswith(("checker.py", "fences.py"))),
    ("counters (sectors, banks, per-thread)", lambda path, name: path.endswith("counters.py")),
    ("launch set-up, shared arrays, fake cuda",
     lambda path, name: path.endswith(("spaces.py", "fakecuda.py", "memory.py", "rebind.py", "launch.py"))),
]


def _body(A, B, C, sA, sB, x, y, tx, ty):
    """matmul_tiled's per-thread work without barriers, on plain NumPy arrays."""
    acc = float32(0.0)
    for t in range(A.shape[1] // TILE):
        sA[ty, tx] = A[y, t * TILE + tx]
        sB[ty, tx] = B[t * TILE + ty, x]
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
    C[y, x] = acc


def _best(run, repeat=3):
    seconds = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        seconds.append(time.process_time() - start)
    return min(seconds)


def vector_split(n):
    """The vector engine's parts, by switching them off (CPU seconds)."""
    A, B = inputs(n)
    C = np.zeros((n, n), np.float32)
    config = ((n // TILE, n // TILE), (TILE, TILE))
    checked, unchecked = gpusim.jit(matmul_tiled), gpusim.jit(matmul_tiled, check=False)
    unchecked[config](A, B, C)
    checked[config](A, B, C)
    assert checked.engine_used == unchecked.engine_used == "vector", (checked.fallback, unchecked.fallback)
    plain = _best(lambda: unchecked[config](A, B, C))
    full = _best(lambda: checked[config](A, B, C))
    replay, flush = wave.VectorLaunch._replay, checker.Checker.flush
    try:
        wave.VectorLaunch._replay = lambda self, wave, blocks: None
        logged = _best(lambda: checked[config](A, B, C))
        wave.VectorLaunch._replay = replay
        checker.Checker.flush = lambda self: self.memory.log.clear()
        ordered = _best(lambda: checked[config](A, B, C))
    finally:
        wave.VectorLaunch._replay, checker.Checker.flush = replay, flush
    return (f"vector engine, N={n}, CPU seconds: checked {full:.3f}, unchecked {plain:.3f}\n"
            f"  waves, unchecked {plain:.3f} | logging {logged - plain:.3f} | "
            f"thread order for the checker {ordered - logged:.3f} | "
            f"checker and counters {full - ordered:.3f}")


def by_switching_off(n):
    A, B = inputs(n)
    C = np.zeros((n, n), np.float32)
    sA, sB = np.zeros((TILE, TILE), np.float32), np.zeros((TILE, TILE), np.float32)

    def body_alone():
        for y in range(n):
            for x in range(n):
                _body(A, B, C, sA, sB, x, y, x % TILE, y % TILE)

    config = ((n // TILE, n // TILE), (TILE, TILE))
    checked = gpusim.jit(matmul_tiled, engine="thread")
    unchecked = gpusim.jit(matmul_tiled, check=False, engine="thread")
    unchecked[config](A, B, C)
    body = _best(body_alone)
    plain = _best(lambda: unchecked[config](A, B, C))
    full = _best(lambda: checked[config](A, B, C))
    flush = checker.Checker.flush
    checker.Checker.flush = lambda self: self.memory.log.clear()
    try:
        logged = _best(lambda: checked[config](A, B, C))
    finally:
        checker.Checker.flush = flush
    return (f"thread engine, N={n}, CPU seconds: checked {full:.2f}, unchecked {plain:.2f}\n"
            f"  kernel body alone {body:.2f} | barriers and scheduling {plain - body:.2f} | "
            f"checked access and logging {logged - plain:.2f} | checker and counters {full - logged:.2f}")


def by_profiler(n, check):
    A, B = inputs(n)
    C = np.zeros((n, n), np.float32)
    kernel = gpusim.jit(matmul_tiled, check=check, engine="thread")
    kernel[(1, 1), (TILE, TILE)](A[:TILE, :TILE].copy(), B[:TILE, :TILE].copy(), C[:TILE, :TILE].copy())
    profile = cProfile.Profile()
    profile.enable()
    kernel[(n // TILE, n // TILE), (TILE, TILE)](A, B, C)
    profile.disable()
    stats = pstats.Stats(profile).stats
    total = sum(entry[2] for entry in stats.values())
    shares = dict.fromkeys([name for name, _ in PARTS], 0.0)
    shares["other"] = 0.0
    for (path, _, name), (_, _, own, _, callers) in stats.items():
        part = _part(path, name) or next((_part(p, c) for p, _, c in callers if _part(p, c)), "other")
        shares[part] += own
    lines = [f"check={check} N={n}: under cProfile {total:.2f} s (C functions count for their caller's part)"]
    lines += [f"  {100 * own / total:5.1f}%  {name}" for name, own in shares.items() if own]
    return "\n".join(lines)


def _part(path, name):
    return next((part for part, test in PARTS if test(path, name)), None)


if __name__ == "__main__":
    for size in map(int, sys.argv[1:] or ["128"]):
        print(vector_split(size))
    for size in map(int, sys.argv[1:] or ["128"]):
        print(by_switching_off(size))
    for size in map(int, sys.argv[1:] or ["128"]):
        for check in (True, False):
            print(by_profiler(size, check))
