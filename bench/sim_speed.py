"""Time a shared-memory tiled matmul (16x16 tiles) under Numba's simulator and under gpusim.

    python bench/sim_speed.py            # prints the table
    python bench/sim_speed.py --save     # also writes bench/results/sim_speed_cpu.txt

Numba's simulator runs in a subprocess with NUMBA_ENABLE_CUDASIM=1; gpusim runs here, with checks and
without, as it ships (its vector engine; the script stops if a launch fell back to threads) and on its thread
engine alone (engine="thread", for comparison). Every run's result is compared with numpy. Times are
wall-clock seconds, best of --repeat runs (Numba's simulator: one run).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from numba import cuda, float32

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "sim_speed_cpu.txt"
TILE = 16
SIZES = (64, 128)
TARGETS = {"gpusim check=True": 30, "gpusim check=False": 100}


@cuda.jit
def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = float32(0.0)
    for t in range(A.shape[1] // TILE):
        sA[ty, tx] = A[y, t * TILE + tx]
        sB[ty, tx] = B[t * TILE + ty, x]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[y, x] = acc


def inputs(n):
    rng = np.random.default_rng(n)
    return rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)


def timed_launch(launch, n, engine=None):
    A, B = inputs(n)
    C = np.zeros((n, n), dtype=np.float32)
    start = time.perf_counter()
    launch[(n // TILE, n // TILE), (TILE, TILE)](A, B, C)
    seconds = time.perf_counter() - start
    np.testing.assert_allclose(C, A @ B, rtol=1e-4)
    if engine is not None and launch.engine_used != engine:
        raise SystemExit(f"gpusim ran the {launch.engine_used} engine, not {engine}: {launch.fallback}")
    return seconds


def numba_simulator_times(sizes):
    """Run this file in a subprocess under Numba's simulator; {n: seconds}."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    command = [sys.executable, __file__, "--numba-sim", *map(str, sizes)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return {int(n): s for n, s in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def gpusim_times(sizes, check, repeat, engine):
    import gpusim

    launch = gpusim.jit(matmul_tiled, check=check, engine="thread" if engine == "thread" else "auto")
    timed_launch(launch, TILE, engine)
    return {n: min(timed_launch(launch, n, engine) for _ in range(repeat)) for n in sizes}


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def table(sizes, times):
    reference = times["Numba simulator"]
    lines = [f"{'simulator':<22}" + "".join(f"{'N=' + str(n):>12}{'speed-up':>10}" for n in sizes)]
    for name, by_size in times.items():
        cells = ""
        for n in sizes:
            ratio = reference[n] / by_size[n]
            cells += f"{by_size[n]:>11.2f}s{ratio:>9.1f}x"
        lines.append(f"{name:<22}{cells}")
    lines.append("")
    for name, target in TARGETS.items():
        worst = min(reference[n] / times[name][n] for n in sizes)
        verdict = "met" if worst >= target else "NOT met"
        lines.append(f"target {name}: >= {target}x faster than Numba's simulator -> {worst:.1f}x ({verdict})")
    return "\n".join(lines)


def main():
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--numba-sim", nargs="+", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=2, help="gpusim runs per size (best is kept)")
    parser.add_argument("--save", action="store_true", help=f"write the table to {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args()
    if args.numba_sim:
        print(json.dumps({n: timed_launch(matmul_tiled, n) for n in args.numba_sim}))
        return
    times = {"Numba simulator": numba_simulator_times(SIZES)}
    times["gpusim check=True"] = gpusim_times(SIZES, True, args.repeat, "vector")
    times["gpusim check=False"] = gpusim_times(SIZES, False, args.repeat, "vector")
    times["threads check=True"] = gpusim_times(SIZES, True, args.repeat, "thread")
    times["threads check=False"] = gpusim_times(SIZES, False, args.repeat, "thread")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"Tiled matmul ({TILE}x{TILE} tiles, float32), wall-clock seconds;"
        f" speed-up = Numba simulator time / this time.\n"
        f"Machine: {machine()}. Measured {stamp} with bench/sim_speed.py.\n"
    )
    report = header + "\n" + table(SIZES, times)
    print(report)
    if args.save:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(report + "\n")


if __name__ == "__main__":
    main()
