"""Record the measurements of the lessons' GPU cells, so that CPU mode can show them.

Usage:  python3 bench/gpu_lessons.py [--out DIR] [--only KEY,KEY]
Writes gpu_lessons_<device>.json into --out (default bench/results), rewritten after every measurement, so a
run stopped early keeps what it measured. Each key is one GPU cell's measurement, made by the function the
lesson calls in GPU mode (bench/lesson_cells/); the kernels that lessons 03, 04 and 06 define are loaded
from the notebooks themselves (their cells tagged `bench-kernels`).
"""

import argparse
import os
import sys
import time
import traceback

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import lesson_kernels  # noqa: E402
from bench.common import write_json  # noqa: E402
from bench.lesson_cells import fusion, latency, launching, softmax  # noqa: E402

LESSONS = {"03": "03_numba_cuda.ipynb", "04": "04_memory_and_performance.ipynb", "06": "06_softmax.ipynb"}

MEASUREMENTS = {  # key -> (lesson cells that use it, measure(kernels of the lessons))
    "latency": ("00 and 02: load latency", lambda k: latency.measure()),
    "array_interface": ("03: CUDA array interface",
                        lambda k: launching.array_interface(k("03")["double_kernel"])),
    "ptx": ("03: PTX", lambda k: launching.ptx(k("03")["double_kernel"])),
    "compile_time": ("03: compile time", lambda k: launching.compile_time()),
    "synchronised_timing": ("03: synchronise before timing", lambda k: launching.synchronised_timing()),
    "launch_cost": ("03: launch cost", lambda k: launching.launch_cost()),
    "fusion": ("04: operator fusion", lambda k: fusion.fusion(k("04"))),
    "recomputation": ("04: recomputation", lambda k: fusion.recomputation(k("04"))),
    "transpose": ("04: bank conflicts", lambda k: fusion.transpose(k("04"))),
    "profile": ("04: torch.profiler", lambda k: fusion.profile_unfused()),
    "softmax": ("06: softmax against torch", lambda k: softmax.measure(k("06"))),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--only", default="", help="comma-separated keys to measure (default: all)")
    args = ap.parse_args()
    only = [key for key in args.only.split(",") if key]
    loaded = {}

    def kernels(lesson):
        if lesson not in loaded:
            loaded[lesson] = lesson_kernels.load(LESSONS[lesson])
        return loaded[lesson]

    results = {}
    for key, (cell, measure) in MEASUREMENTS.items():
        if only and key not in only:
            continue
        start = time.perf_counter()
        try:
            results[key] = measure(kernels)
            status = "done"
        except Exception as error:  # noqa: BLE001 -- record the failure, go on with the next cell
            traceback.print_exc()
            results[key + "_error"] = f"{type(error).__name__}: {error}"
            status = f"FAILED ({type(error).__name__})"
        path = write_json(args.out, "gpu_lessons", results)
        print(f"[gpu_lessons] {key:20} ({cell}): {status} in {time.perf_counter() - start:.1f} s -> {path}",
              flush=True)


if __name__ == "__main__":
    main()
