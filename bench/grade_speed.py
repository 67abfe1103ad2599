"""Time the classroom grader: the fixture class as a whole, sandboxed and not, and what one sandbox costs.

    python bench/grade_speed.py                          # prints the figures
    python bench/grade_speed.py --baseline ../main-copy  # also grades with another checkout, for comparison
    python bench/grade_speed.py --save                   # also writes bench/results/grade_speed_cpu.txt

1. The fixture class of tests/grading/ (11 fake learners, 19 notebooks of assignments 01 and 02, reference
   timing included) graded by ``python -m course.grade --jobs JOBS``, with bubblewrap and with
   ``--sandbox off`` (and with bubblewrap by the ``--baseline`` checkout's grader), ``--rounds`` times in
   turns, so that the load of a shared machine falls on each alike: per notebook, the median wall-clock
   seconds and, where the bench may make cgroups (root), the CPU seconds of the grader and every process it
   started (a cgroup around the run counts them, ended processes included), which a busy machine changes
   far less than wall-clock time.
2. The cost of the sandbox per notebook: a notebook starts at least one learner worker (W1: the setup cell,
   which imports utils, torch and numba) and one kernel runner (W2: gpusim and numba's compiler). Each, and
   a bare ``python -c pass``, is started --repeat times, one at a time, with and without bubblewrap in
   turns; the difference of the medians is the sandbox's overhead per start.
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from grading import learners  # noqa: E402
from grading.fake_class import write_class  # noqa: E402

from course.grade import protocol  # noqa: E402
from course.grade.assignments import load_assignment  # noqa: E402
from course.grade.cgroups import Budget, Cgroups  # noqa: E402
from course.grade.channel import Channel  # noqa: E402
from course.grade.deadlines import Deadline  # noqa: E402
from course.grade.grading import LEARNER_ENV, RUNNER_ENV  # noqa: E402
from course.grade.limits import Limits  # noqa: E402
from course.grade.sandbox import Sandbox  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "grade_speed_cpu.txt"
START_DEADLINE_S = 300.0


def machine() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            cpu = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores available, Python {platform.python_version()}, {platform.system()}"


def grade_class(folder: Path, jobs: int, sandbox: str, root: Path, meter: Cgroups) -> tuple[float, float]:
    """Wall-clock and CPU seconds (nan where no cgroup counts them) of grading ``folder`` with the grader of
    the checkout at ``root``."""
    out = folder.parent / f"graded-{sandbox}"
    command = [sys.executable, "-m", "course.grade", str(folder), "--out", str(out), "--jobs", str(jobs),
               "--sandbox", sandbox]
    if "--cache" in (root / "course" / "grade" / "__main__.py").read_text():
        command += ["--cache", ""]  # every run measures the reference solutions again, as before the cache
    domain = meter.domain()
    start = time.perf_counter()
    subprocess.run(domain.wrap(command) if domain else command, cwd=root, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(root)})
    seconds = time.perf_counter() - start
    cpu = domain.cpu_s() if domain else float("nan")
    if domain:
        meter.release(domain)
    shutil.rmtree(out)
    return seconds, cpu


STARTS = {"bare": "bare Python (python -c pass)", "learner": "learner worker W1 (setup cell)",
          "runner": "kernel runner W2"}


def start_worker(sandbox: Sandbox, module: str, setup: str, what: str) -> float:
    """Seconds from starting a worker to its ready message (W1 after running ``setup``), or to the exit of
    a bare Python."""
    limits = Limits(START_DEADLINE_S, START_DEADLINE_S, 2 * 2**30)
    start = time.perf_counter()
    if what == "bare":
        launch = sandbox.launch([sys.executable, "-c", "pass"], {}, None)
        subprocess.run(launch.argv, env=launch.env, cwd=launch.cwd, user=launch.user, check=True)
        seconds = time.perf_counter() - start
        for folder in launch.cleanup:
            shutil.rmtree(folder)
        if launch.lease is not None:
            launch.lease.release()
        return seconds
    if what == "learner":
        launch = sandbox.launch([sys.executable, "-P", "-m", "course.grade.worker"], LEARNER_ENV,
                                ("notebook.ipynb", b"{}"))
        message = {"type": "start", "module": module, "cells": [[0, "setup", setup]],
                   "resources": limits.resources()}
    else:
        launch = sandbox.launch([sys.executable, "-P", "-m", "course.grade.runner"], RUNNER_ENV, None)
        message = {"type": "start", "module": module, "resources": limits.resources()}
    channel = Channel(launch)
    deadline = Deadline(START_DEADLINE_S)
    channel.send(message, deadline)
    while channel.receive(deadline, protocol.SETUP_CAP, lambda m: m)["type"] != "ready":
        pass
    seconds = time.perf_counter() - start
    channel.close()
    return seconds


def class_figures(args) -> list[str]:
    """The fixture class graded by each grader ``args.rounds`` times, in turns; per notebook, the medians."""
    graders = {f"this checkout, --sandbox {sandbox}": (ROOT, sandbox) for sandbox in ("bwrap", "off")}
    if args.baseline:
        graders[f"baseline {args.baseline.resolve()}, --sandbox bwrap"] = (args.baseline.resolve(), "bwrap")
    meter = Cgroups(Budget(2**40, 2**20, os.cpu_count() or 1), 1)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in graders}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch) / "class"
            write_class(folder, ROOT / "solutions" / f"{learners.A01}.ipynb")
            notebooks = len(list(folder.rglob("*.ipynb")))
            for _ in range(args.rounds):
                for name, (root, sandbox) in graders.items():
                    runs[name].append(grade_class(folder, args.jobs, sandbox, root, meter))
    finally:
        meter.close()
    counted = "CPU s counted by a cgroup around the run" if meter.location else f"no CPU s ({meter.why_not})"
    lines = [f"fixture class ({notebooks} notebooks, --jobs {args.jobs}), per notebook, median of "
             f"{args.rounds} runs taken in turns: wall-clock s / {counted}"]
    for name, values in runs.items():
        wall = statistics.median(seconds for seconds, _ in values) / notebooks
        cpu = statistics.median(cpu for _, cpu in values) / notebooks
        each = ", ".join(f"{seconds:.0f}" for seconds, _ in values)
        lines.append(f"  {name}: {wall:.2f} s / {cpu:.2f} s (whole runs: {each} s)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--save", action="store_true")
    parser.add_argument("--no-class", action="store_true", help="only the worker starts")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each grader on the fixture class")
    parser.add_argument("--baseline", type=Path, help="another checkout whose grader is timed too")
    args = parser.parse_args()
    lines = [f"course.grade speed, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC", f"machine: {machine()}"]
    if not args.no_class:
        lines += class_figures(args)
    assignment = load_assignment(ROOT / "solutions" / f"{learners.A01}.ipynb")
    setup = assignment.cells[0].source
    sandboxes = {mode: Sandbox(mode) for mode in ("bwrap", "off")}
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for _ in range(args.repeat):  # the two modes take turns, so that the machine's load hits both alike
            for mode, sandbox in sandboxes.items():
                for what in STARTS:
                    times.setdefault((mode, what), []).append(start_worker(sandbox, assignment.module, setup,
                                                                           what))
    finally:
        for sandbox in sandboxes.values():
            sandbox.close()
    medians = {key: statistics.median(values) for key, values in times.items()}

    def spread(mode: str, what: str) -> str:
        return f"{medians[mode, what]:.2f} s ({min(times[mode, what]):.2f}-{max(times[mode, what]):.2f})"

    lines.append(f"worker starts, median (min-max) of {args.repeat}, in bubblewrap / without:")
    for what, name in STARTS.items():
        lines.append(f"  {name}: {spread('bwrap', what)} / {spread('off', what)}: "
                     f"{medians['bwrap', what] - medians['off', what]:+.2f} s")
    overhead = sum(medians["bwrap", what] - medians["off", what] for what in ("learner", "runner"))
    lines.append(f"  one W1 and one W2 start (a notebook's least): {overhead:+.2f} s")
    print("\n".join(lines))
    if args.save:
        RESULTS.write_text("\n".join(lines) + "\n")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
