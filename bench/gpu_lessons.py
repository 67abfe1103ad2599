"""Record the measurements of the lessons' GPU cells, so that CPU mode can show them.

Usage:  python3 bench/gpu_lessons.py [--out DIR] [--only KEY,KEY]
Writes gpu_lessons_<device>.json and gpu_facts_<device>.json into --out (default bench/results), each
rewritten after every measurement, so a run stopped early keeps what it measured; a file none of whose keys
ran is not written. Each key is one GPU cell's measurement, made by the function the lesson calls in GPU
mode (bench/lesson_cells/); the kernels that lessons 02, 03, 04 and 06 define are loaded from the notebooks
themselves (their cells tagged `bench-kernels`). The `gpu_facts` keys check what the lessons say about the
hardware against it (issue 29): buggy kernels, launches, float64 constants, coalescing, tile widths.
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
from bench.lesson_cells import barriers, fusion, latency, launching, softmax, tile_width  # noqa: E402

LESSONS = {"02": "02_shared_memory_and_barriers.ipynb", "03": "03_numba_cuda.ipynb",
           "04": "04_memory_and_performance.ipynb", "06": "06_softmax.ipynb"}

MEASUREMENTS = {  # key -> (result file, lesson cells that use it, measure(kernels of the lessons))
    "latency": ("gpu_lessons", "00 and 02: load latency", lambda k: latency.measure()),
    "array_interface": ("gpu_lessons", "03: CUDA array interface",
                        lambda k: launching.array_interface(k("03")["double_kernel"])),
    "compile_time": ("gpu_lessons", "03: compile time", lambda k: launching.compile_time()),
    "fusion": ("gpu_lessons", "04: operator fusion", lambda k: fusion.fusion(k("04"))),
    "transpose": ("gpu_lessons", "04: bank conflicts", lambda k: fusion.transpose(k("04"))),
    "profile": ("gpu_lessons", "04: torch.profiler", lambda k: fusion.profile_unfused()),
    "missing_barrier": ("gpu_facts", "03: a missing barrier, 1 to 8 warps",
                        lambda k: barriers.missing_barrier(k("03"))),
    "divergent_barrier": ("gpu_facts", "02 and 03: divergent barriers (child process, time limit)",
                          lambda k: barriers.divergent()),
    "indices": ("gpu_facts", "03: a negative index, a missing guard",
                lambda k: dict(negative_index=barriers.negative_index(k("03")),
                               out_of_bounds=barriers.out_of_bounds(k("03")))),
    "launch": ("gpu_facts", "03: launch cost by argument, and whether a launch waits",
               lambda k: launching.launch()),
    "recomputation_variants": ("gpu_facts", "04: recomputation, float64 constants, 4 elements per thread",
                               lambda k: fusion.recomputation_variants(k("04"))),
    "rows_and_columns": ("gpu_facts", "04: thread per row or column at 8192^2, strided copy",
                         lambda k: fusion.rows_and_columns(k("04"))),
    "tile_width": ("gpu_facts", "05: static/dynamic shared memory, compile-time/run-time width",
                   lambda k: tile_width.measure()),
    "softmax_kernel_only": ("gpu_facts", "06: softmax against torch.softmax alone and a copy",
                            lambda k: softmax.measure_kernel_only(k("06"))),
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

    unknown = [key for key in only if key not in MEASUREMENTS]
    if unknown:
        sys.exit(f"unknown keys {unknown}; the keys are {', '.join(MEASUREMENTS)}")
    results = {}  # result file -> its measurements
    for key, (name, cell, measure) in MEASUREMENTS.items():
        if only and key not in only:
            continue
        start = time.perf_counter()
        file_results = results.setdefault(name, {})
        try:
            file_results[key] = measure(kernels)
            status = "done"
        except Exception as error:  # noqa: BLE001 -- record the failure, go on with the next cell
            traceback.print_exc()
            file_results[key + "_error"] = f"{type(error).__name__}: {error}"
            status = f"FAILED ({type(error).__name__})"
        path = write_json(args.out, name, file_results)
        print(f"[gpu_lessons] {key:20} ({cell}): {status} in {time.perf_counter() - start:.1f} s -> {path}",
              flush=True)


if __name__ == "__main__":
    main()
