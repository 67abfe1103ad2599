"""What each schedule of gpusim.schedules costs: a producer/consumer ring of two warps, checked, per schedule.

    python bench/schedule_cost.py            # prints the table
    python bench/schedule_cost.py --save     # also writes bench/results/schedule_cost_cpu.txt

The kernel is tests/flag_kernels.py's ring copy (the right protocol): warp 0 fills a ring of 2 tiles of 32
values, warp 1 copies them out, handing each tile over through flags and fences. Times are CPU seconds of
this process (time.process_time, which a busy machine disturbs less than the wall clock), best of --repeat
launches after one warm-up launch; "x default" divides by the sequential schedule's time.
"""

import argparse
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from flag_kernels import W, make_ring  # noqa: E402

import gpusim  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "schedule_cost_cpu.txt"
SHAPES = ((1, 6), (2, 16))  # (rows, tiles of 32 values)


def cpu_seconds(kernel, x, repeat):
    """Best CPU time of `repeat` launches of one row per block, two warps per block."""
    best = float("inf")
    for _ in range(repeat + 1):
        out = np.zeros_like(x)
        start = time.process_time()
        kernel[x.shape[0], 2 * W](x, out)
        best = min(best, time.process_time() - start)
        np.testing.assert_array_equal(out, 2 * x)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    lines = [f"gpusim {gpusim.__version__}: the ring copy of tests/flag_kernels.py (right protocol), "
             f"checked, CPU seconds, best of {args.repeat}",
             f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"load average {os.getloadavg()[0]:.1f}; {datetime.now(timezone.utc):%Y-%m-%d}"]
    for rows, tiles in SHAPES:
        x = np.arange(rows * tiles * W, dtype=np.float32).reshape(rows, -1)
        lines.append(f"\n{rows} row(s) of {tiles} tiles          seconds  x default")
        default = None
        for schedule in gpusim.schedules(2 * W):
            seconds = cpu_seconds(gpusim.jit(make_ring("right"), schedule=schedule), x, args.repeat)
            default = default or seconds
            lines.append(f"  {schedule.name:30s} {seconds:8.3f}  {seconds / default:8.1f}")
    text = "\n".join(lines)
    print(text)
    if args.save:
        RESULTS.write_text(text + "\n")
        print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
