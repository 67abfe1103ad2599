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
KERNEL_REPORT = re.compile(r"^(Invalid __\w+__|Barrier error|Error: Race|Warning: Race|Misaligned)")
API_ERROR = re.compile(r"^Program hit CUDA_ERROR_")
CONTROL = "correct: block_sum (control)"


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


def headlines(output):
    """The sanitizer's own lines, without its prefix."""
    return [line[len(PREFIX):].rstrip() for line in output.splitlines() if line.startswith(PREFIX)]


def parse(output):
    """What the sanitizer printed, counted: its summary lines; `errors` (ERROR SUMMARY, or racecheck's errors)
    and racecheck's `warnings`; `hazards`, the hazards its race reports name; `kernel_reports`, reports about
    the kernel's own accesses and barriers; `api_errors`, failed CUDA API calls (CUDA_ERROR_...), which
    memcheck counts among its errors: Numba's Python bindings make some at every start-up, and a kernel that
    faults makes the calls after it fail; and the kinds of report, numbers blanked."""
    lines = headlines(output)
    summaries = [line for line in lines if "SUMMARY" in line]
    counts = dict(errors=None, warnings=None)
    for line in summaries:
        total = re.search(r"ERROR SUMMARY: (\d+) errors?", line)
        if total:
            counts["errors"] = int(total.group(1))
        race = re.search(r"\((\d+) errors?, (\d+) warnings?\)", line)
        if race:
            counts.update(errors=int(race.group(1)), warnings=int(race.group(2)))
    hazards = sum(int(match.group(1)) for line in lines for match in [re.search(r"\[(\d+) hazards?\]", line)]
                  if match)
    kinds = []
    for line in lines:
        headline = line and not line.startswith((" ", "\t"))
        if headline and not any(word in line for word in ("SUMMARY", "SANITIZER")):
            kind = re.sub(r"0x[0-9a-f]+|\d+", "#", line)[:120]
            if kind not in kinds:
                kinds.append(kind)
    return dict(summaries=summaries, **counts, hazards=hazards,
                kernel_reports=sum(bool(KERNEL_REPORT.match(line)) for line in lines),
                api_errors=sum(bool(API_ERROR.match(line)) for line in lines), kinds=kinds[:8])


def findings(result, control):
    """What one tool said about the kernel itself, in a few words. Racecheck: its errors and warnings (a race
    inside one warp is a warning) and the hazards they name, from its summary. Memcheck and synccheck: the
    kernel's own reports where the run counted them (`kernel_reports`); for runs recorded before it did,
    the errors beyond the control's (a correct kernel's run: its errors are the failed API calls of every
    start-up), which still include the API calls that fail after a kernel faults."""
    if result is None:
        return "-"
    if not result.get("case_finished") and result.get("errors") is None:
        return f"did not run ({result.get('exit_status')})"
    kept = result.get("output_start", []) + [PREFIX + line for line in result["summaries"]]
    counted = parse("\n".join(kept))
    if counted["warnings"] is not None:
        errors, warnings = counted["errors"], counted["warnings"]
        if errors + warnings == 0:
            return "clean"
        said = [f"{errors} error" + "s" * (errors != 1)] * bool(errors)
        said += [f"{warnings} warning" + "s" * (warnings != 1)] * bool(warnings)
        return f"{', '.join(said)} ({counted['hazards']} hazards)"
    if "kernel_reports" in result:
        found = result["kernel_reports"]
    else:
        found = max(0, (result.get("errors") or 0) - ((control or {}).get("errors") or 0))
    return "clean" if found == 0 else f"{found} error" + "s" * (found != 1)


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
