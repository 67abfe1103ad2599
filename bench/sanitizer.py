"""What NVIDIA's compute-sanitizer reports for the lessons' buggy kernels (lessons 02 and 03), tool by tool.

Usage:  python3 bench/sanitizer.py [--out DIR] [--sanitizer PATH] [--jobs N]
Each case is one of the lessons' kernels (loaded from the notebooks' cells tagged `bench-kernels`), launched
once in a fresh python3 under `compute-sanitizer --tool racecheck`, `memcheck` and `synccheck`. Writes
gpu_sanitizer_<device>.json into --out (default bench/results): per case and tool, the sanitizer's summary
lines, its error count, the kinds of report it printed and the start of its output; rewritten after every
run, so a run stopped early keeps what it found.

`python3 bench/sanitizer.py --case NAME` runs one case without the sanitizer (what each child does).
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = ("racecheck", "memcheck", "synccheck")
RUN_LIMIT_S = 120
KEPT_LINES = 24
PREFIX = "========= "  # every line compute-sanitizer prints starts with it


def _reverse_args(block, n):
    x = np.arange(1, n + 1, dtype=np.float32)
    return x, np.zeros_like(x)


CASES = {  # name -> (lesson, what it launches: kernels -> None)
    "missing barrier, 64 threads (2 warps)": (
        "03", lambda k: k["make_reverse_no_barrier"](64)[2, 64](*_reverse_args(64, 128))),
    "missing barrier, 8 threads (inside one warp)": (
        "03", lambda k: k["make_reverse_no_barrier"](8)[2, 8](*_reverse_args(8, 16))),
    "divergent barrier: early return, 64 threads": (
        "03", lambda k: k["make_reverse_early_return"](64)[2, 64](*_reverse_args(64, 100))),
    "divergent barrier: early return, 8 threads": (
        "03", lambda k: k["make_reverse_early_return"](8)[2, 8](*_reverse_args(8, 12))),
    "divergent barrier: barrier inside the if (block_sum)": (
        "02", lambda k: k["block_sum_barrier_in_if"][3, k["BLOCK"]](
            np.ones(20, np.float32), np.zeros(3, np.float32), 20)),
    "out of bounds: no guard": (
        "03", lambda k: k["double_no_guard"][2, 64](*_reverse_args(64, 100))),
    "negative index: x[i - 1] at i = 0": (
        "03", lambda k: k["difference"][2, 8](*_reverse_args(8, 16))),
    "non-atomic update of global memory": (
        "03", lambda k: k["histogram_no_atomic"][2, 32](np.zeros(64, np.int64), np.zeros(1, np.int32))),
    "correct: block_sum (control)": (
        "02", lambda k: k["block_sum"][3, k["BLOCK"]](np.ones(20, np.float32), np.zeros(3, np.float32), 20)),
}
NOTEBOOKS = {"02": "02_shared_memory_and_barriers.ipynb", "03": "03_numba_cuda.ipynb"}


def run_case(name):
    """Launch one case here (no sanitizer): load its lesson's kernels, launch, synchronise."""
    from bench import lesson_kernels

    lesson, launch = CASES[name]
    kernels = lesson_kernels.load(NOTEBOOKS[lesson])  # imports utils, which picks the mode before numba
    launch(kernels)
    kernels["cuda"].synchronize()
    print(f"case finished: {name}", flush=True)


def find_sanitizer(given=None):
    """The compute-sanitizer executable: `given`, else on PATH, else in a CUDA toolkit's usual places."""
    candidates = [given] if given else []
    candidates += [shutil.which("compute-sanitizer")]
    candidates += sorted(glob.glob("/usr/local/cuda*/bin/compute-sanitizer"), reverse=True)
    candidates += sorted(glob.glob("/opt/nvidia/*/compute-sanitizer/compute-sanitizer"), reverse=True)
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def parse(output):
    """The sanitizer's summary lines, its error count and the kinds of report it printed."""
    lines = [line[len(PREFIX):].rstrip() for line in output.splitlines() if line.startswith(PREFIX)]
    summaries = [line for line in lines if "SUMMARY" in line]
    errors = None
    for line in summaries:
        match = re.search(r"ERROR SUMMARY: (\d+) error", line)
        if match:
            errors = int(match.group(1))
    found = [re.search(r"(\d+) hazards? displayed", line) for line in summaries]
    hazards = [int(match.group(1)) for match in found if match]
    kinds = []
    for line in lines:
        headline = line and not line.startswith((" ", "\t"))
        if headline and not any(word in line for word in ("SUMMARY", "SANITIZER")):
            kind = re.sub(r"0x[0-9a-f]+|\d+", "#", line)[:120]
            if kind not in kinds:
                kinds.append(kind)
    return dict(summaries=summaries, errors=errors, hazards=hazards[0] if hazards else None, kinds=kinds[:8])


def sanitize(sanitizer, tool, name):
    """Run one case under one tool; what it printed, parsed."""
    command = [sanitizer, "--tool", tool, sys.executable, os.path.abspath(__file__), "--case", name]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_LIMIT_S, cwd=ROOT, env=env)
        output, status = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as stopped:
        output = stopped.stdout.decode() if isinstance(stopped.stdout, bytes) else (stopped.stdout or "")
        status = f"stopped after {RUN_LIMIT_S} s"
    result = parse(output)
    sanitizer_lines = [line for line in output.splitlines() if line.startswith(PREFIX)]
    result.update(exit_status=status, seconds=round(time.perf_counter() - start, 1),
                  case_finished=f"case finished: {name}" in output, output_start=sanitizer_lines[:KEPT_LINES])
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--sanitizer", help="compute-sanitizer's path (default: PATH or /usr/local/cuda*/bin)")
    ap.add_argument("--jobs", type=int, default=4, help="sanitizer runs at once")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        run_case(args.case)
        return
    from bench.common import write_json

    sanitizer = find_sanitizer(args.sanitizer)
    if sanitizer is None:
        sys.exit("compute-sanitizer not found: pass --sanitizer PATH")
    version = subprocess.run([sanitizer, "--version"], capture_output=True, text=True).stdout.strip()
    data = dict(sanitizer=sanitizer, sanitizer_version=version.splitlines()[-1] if version else "?",
                tools=list(TOOLS), cases={name: {} for name in CASES})
    jobs = [(tool, name) for name in CASES for tool in TOOLS]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = pool.map(lambda job: sanitize(sanitizer, *job), jobs)
        for (tool, name), result in zip(jobs, results, strict=True):
            data["cases"][name][tool] = result
            path = write_json(args.out, "gpu_sanitizer", data)
            print(f"[sanitizer] {tool:9} {name:55} errors {result['errors']}, {result['seconds']} s -> "
                  f"{path}", flush=True)


if __name__ == "__main__":
    main()
