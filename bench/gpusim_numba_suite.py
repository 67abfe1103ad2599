"""Run every kernel launch of numba-cuda's installed tests under Numba's simulator and under gpusim, and
compare.

    python bench/gpusim_numba_suite.py              # every module; writes
    bench/results/gpusim_numba_suite.json
    python bench/gpusim_numba_suite.py --only test_warp_ops,test_globals    # some modules; prints, writes
    nothing
    make gpusim-numba-suite                         # the first, with the course's .venv

The tests are numba-cuda's own (numba/cuda/tests/cudapy and doc_examples, as installed), run with unittest
under Numba's simulator, one process per module. Every kernel launch runs under gpusim too, checked and
unchecked, on copies of its arguments, and gpusim's outputs are compared with the simulator's bit for bit;
where the simulator skips a test, the test runs with gpusim's results and its own assertions judge them
(bench/numba_suite/child.py). bench/numba_suite/classes.py sorts the launches into classes: same, refused
(by feature), false alarm, fidelity difference, real bug found, skipped (with the reason).
"""

import argparse
import collections
import importlib.metadata
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.numba_suite.classes import CLASSES, classify, kernel_key  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "gpusim_numba_suite.json"
FOLDERS = ("cudapy", "doc_examples")
MODULE_TIMEOUT_S = 1200


def test_modules():
    """Dotted names of the installed test modules, in folder and name order."""
    location = Path(importlib.util.find_spec("numba_cuda").submodule_search_locations[0])
    tests = location / "numba" / "cuda" / "tests"
    return [f"numba.cuda.tests.{folder}.{path.stem}"
            for folder in FOLDERS for path in sorted((tests / folder).glob("test_*.py"))]


def run_module(module, folder, modes, timeout):
    """Run one module in a child process; its JSON lines (partial if it timed out) and whether it finished."""
    out = Path(folder) / f"{module}.jsonl"
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    env.pop("GPUSIM_ENGINE", None)
    command = [sys.executable, "-m", "bench.numba_suite.child", str(out), module, "--modes", ",".join(modes)]
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, timeout=timeout, capture_output=True, text=True)
        status = "done" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
    except subprocess.TimeoutExpired:
        status = f"timed out after {timeout} s"
    lines = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return module, lines, status


def summarize(results, modes, wall_seconds, jobs):
    """The result file's content: counts per class and what they are made of."""
    launches, tests, skipped_modules, unfinished = [], collections.Counter(), {}, {}
    modules_with_launches = set()
    for module, lines, status in results:
        for line in lines:
            if "kernel" in line:
                line["module"] = module
                launches.append(line)
                modules_with_launches.add(module)
            elif "module_skipped" in line:  # the module skips itself when imported
                skipped_modules[module] = line["reason"]
            elif "test" in line:
                tests[line["outcome"]] += 1
        if status != "done":
            unfinished[module] = status
    summary = {
        "command": "make gpusim-numba-suite  (python bench/gpusim_numba_suite.py)",
        "numba_cuda": importlib.metadata.version("numba-cuda"),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {jobs} modules at a time",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "wall_seconds": round(wall_seconds, 1),
        "modules": len(results),
        "modules_with_launches": len(modules_with_launches),
        "modules_skipped_at_import": skipped_modules,
        "modules_unfinished": unfinished,
        "tests": dict(tests),
        "launches": len(launches),
        "kernels": len({kernel_key(r) for r in launches}),
        "launches_judged_by_assertions": sum(r["reference"] == "assertions" for r in launches),
    }
    for mode in modes:
        summary[mode] = _mode_summary(launches, mode)
    summary["seconds"] = _seconds(launches, modes)
    return summary


def _mode_summary(launches, mode):
    counts = collections.Counter()
    refused = collections.defaultdict(lambda: {"kernels": set(), "launches": 0})
    listed = collections.defaultdict(list)
    skipped = collections.Counter()
    for record in launches:
        kind, detail = classify(record, mode)
        counts[kind] += 1
        if kind == "refused":
            refused[detail]["kernels"].add(kernel_key(record))
            refused[detail]["launches"] += 1
        elif kind == "skipped":
            skipped[detail[:160]] += 1
        elif kind != "same":
            listed[kind].append({"test": record["test"], "kernel": kernel_key(record), "detail": detail})
    judged = sum(counts[k] for k in CLASSES if k != "skipped")
    total = sum(counts.values())
    return {
        "counts": {kind: counts[kind] for kind in CLASSES},
        "same_share_of_judged": round(counts["same"] / judged, 4) if judged else None,
        "same_share_of_all": round(counts["same"] / total, 4) if total else None,
        "refused_by_feature": {
            feature: {"kernels": len(entry["kernels"]), "launches": entry["launches"]}
            for feature, entry in sorted(refused.items(), key=lambda item: -item[1]["launches"])
        },
        "false_alarms": listed["false alarm"],
        "fidelity_differences": listed["fidelity"],
        "real_bugs": listed["real bug"],
        "skipped_reasons": dict(skipped.most_common()),
    }


def _seconds(launches, modes):
    """Summed seconds of the launches that every engine ran to the end."""
    both = [r for r in launches if r.get("simulator", {}).get("ok") and all(r[m]["ok"] for m in modes)]
    seconds = {"launches": len(both), "simulator": round(sum(r["simulator"]["seconds"] for r in both), 1)}
    for mode in modes:
        seconds[f"gpusim_{mode}"] = round(sum(r[mode]["seconds"] for r in both), 1)
    return seconds


def print_summary(summary, modes):
    print(f"{summary['launches']} launches of {summary['kernels']} kernels from "
          f"{summary['modules_with_launches']} modules ({summary['launches_judged_by_assertions']} judged by "
          f"the tests' assertions); {summary['wall_seconds']} s")
    for mode in modes:
        part = summary[mode]
        counts = ", ".join(f"{kind} {n}" for kind, n in part["counts"].items())
        print(f"  {mode}: {counts}; same {part['same_share_of_judged']:.1%} of the judged launches"
              if part["same_share_of_judged"] is not None else f"  {mode}: {counts}")
        for feature, entry in part["refused_by_feature"].items():
            print(f"    refused  {entry['launches']:4d} launches, {entry['kernels']:3d} kernels: {feature}")
        for kind in ("false_alarms", "fidelity_differences", "real_bugs"):
            for item in part[kind]:
                label = kind[:-1].replace("_", " ")
                print(f"    {label}: {item['test']} {item['kernel']}: {item['detail'][:200]}")
    print(f"  seconds: {summary['seconds']}")
    for module, status in summary["modules_unfinished"].items():
        print(f"  unfinished: {module}: {status}")


def run_all(options, modes):
    """Run the modules (every one, or --only's), keep their records if asked, and summarize them."""
    modules = test_modules()
    if options.only:
        wanted = set(options.only.split(","))
        modules = [m for m in modules if m.rsplit(".", 1)[1] in wanted]
    folder = options.keep or tempfile.mkdtemp(prefix="gpusim_numba_suite_")
    Path(folder).mkdir(parents=True, exist_ok=True)
    for stale in Path(folder).glob("*.jsonl"):
        stale.unlink()
    start = time.perf_counter()
    with ThreadPoolExecutor(options.jobs) as pool:
        results = list(pool.map(lambda m: run_module(m, folder, modes, options.timeout), modules))
    summary = summarize(results, modes, time.perf_counter() - start, options.jobs)
    statuses = {module: status for module, _, status in results}
    run = {"wall_seconds": summary["wall_seconds"], "jobs": options.jobs, "date": summary["date"],
           "statuses": statuses}
    (Path(folder) / "run.json").write_text(json.dumps(run) + "\n")
    return summary


def kept_results(folder):
    """(module, records, status) of each module of a kept run, and the run's own facts (run.json)."""
    run = json.loads((Path(folder) / "run.json").read_text())
    results = []
    for module, status in run["statuses"].items():
        path = Path(folder) / f"{module}.jsonl"
        lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        results.append((module, lines, status))
    return results, run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="module names, comma-separated (test_warp_ops,...); saves nothing")
    parser.add_argument("--jobs", type=int, default=2, help="modules run at once (default 2)")
    parser.add_argument("--modes", default="checked,unchecked")
    parser.add_argument("--timeout", type=int, default=MODULE_TIMEOUT_S, help="seconds per module")
    parser.add_argument("--keep", help="folder to keep each module's launch records in (JSON lines)")
    parser.add_argument("--records", help="sort the records a run kept (--keep) again; runs nothing")
    parser.add_argument("--out", default=str(RESULTS))
    options = parser.parse_args(argv)
    modes = options.modes.split(",")
    if options.records:
        results, run = kept_results(options.records)
        summary = summarize(results, modes, run["wall_seconds"], run["jobs"])
        summary["date"] = run["date"]
    else:
        summary = run_all(options, modes)
    print_summary(summary, modes)
    if not options.only:
        Path(options.out).write_text(json.dumps(summary, indent=1) + "\n")
        print(f"wrote {options.out}")


if __name__ == "__main__":
    main()
