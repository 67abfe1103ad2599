"""How long the compile gate (course.compilegate) adds to a check, on this machine's CPU.

Usage:  python3 bench/compile_gate.py [--out bench/results/compile_gate_cpu.txt]

Each route runs in a fresh Python process, so "first" includes everything a learner's first check pays:
with Numba's simulator on (the course's CPU mode) the first compile starts the helper process, which imports
numba.cuda; with it off the compile runs in-process (numba imported before timing starts). Kernels are the
course's solutions (solutions/*.ipynb). Times are medians over --repeat fresh processes.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ONE_ROUTE = r'''
import json, linecache, sys, time
import numpy as np
from numba import cuda, float32
from course import compilegate
from course.kernelsource import describe
from course.tasks import part07

def cells(notebook, grade_ids, **names):
    namespace = {"cuda": cuda, "np": np, "float32": float32, **names}
    for index, cell in enumerate(json.loads(open(f"solutions/{notebook}").read())["cells"]):
        if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("grade_id") in grade_ids:
            source, filename = "".join(cell["source"]), f"<{notebook} cell {index + 1}>"
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            exec(compile(source, filename, "exec"), namespace)
    return namespace

first = cells("01_kernels_in_python.ipynb", {"vector_add_solution"})["vector_add"]
tiled = cells("05_tiled_matmul.ipynb", {"make_tiled_matmul_solution"})["make_tiled_matmul"](16)
flash = cells("07_flash_attention.ipynb", {"numpy_imports", "kernel_constants", "flash_attention_solution"},
              tasks=part07)["flash_attention"]
m = np.zeros((5, 7), np.float32)
heads = [np.zeros((2, 9, part07.HEAD_DIM), np.float32) for _ in range(4)]
jobs = {"first kernel (vector_add)": (first, (np.zeros(4, np.float32),) * 3),
        "second kernel (tiled matmul)": (tiled, (m, m.T.copy(), np.zeros((5, 5), np.float32))),
        "third kernel (flash attention)": (flash, (*heads, np.zeros((2, 9), np.float32), np.float32(0.3)))}
times = {}
start = time.perf_counter()
compilegate.available()
times["available()"] = time.perf_counter() - start
for name, (kernel, args) in jobs.items():
    start = time.perf_counter()
    compilegate.compile_kernel(describe(kernel), compilegate.signature_of(args))
    times[name] = time.perf_counter() - start
start = time.perf_counter()
compilegate.compile_kernel(describe(tiled), compilegate.signature_of(jobs["second kernel (tiled matmul)"][1]))
times["second kernel again (cache hit)"] = time.perf_counter() - start
times["helper processes started"] = compilegate._helper.started
print(json.dumps(times))
'''


def run_route(simulator: bool) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    result = subprocess.run([sys.executable, "-c", ONE_ROUTE], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=600, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "compile_gate_cpu.txt")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lines = [f"compile gate timings, median of {args.repeat} fresh processes, {os.cpu_count()} CPU cores",
             f"python {sys.version.split()[0]}"]
    for simulator in (True, False):
        runs = [run_route(simulator) for _ in range(args.repeat)]
        route = "simulator on: helper process" if simulator else "simulator off: in-process"
        lines.append(f"\n{route}")
        for name in runs[0]:
            value = statistics.median(run[name] for run in runs)
            unit = "" if name.startswith("helper") else " s"
            lines.append(f"  {name:32s} {value:8.3f}{unit}" if unit else f"  {name:32s} {value:8.0f}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
