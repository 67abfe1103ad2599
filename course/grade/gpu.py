"""GPU-timed assignments: the kernels a class handed in, timed on a GPU, with a leaderboard.

    python -m course.grade SUBMISSIONS --out OUT --gpu-kernels      # anywhere: grade on the CPU, keep kernels
    python -m course.grade.gpu OUT [--tasks tiled_matmul,...]        # on a machine with an NVIDIA GPU

The first step grades as always and also writes ``OUT/kernels.json``: for every task a learner passed
(visible and hidden tests) whose kernel the grader launches itself, the kernel as a spec
(:mod:`course.kernelsource`) and where its Task comes from. No learner code is in it, and none runs in the
second step: there each kernel is rebuilt from its spec, compiled by Numba's CUDA target in this process and
timed by the protocol of :mod:`.gputiming` at the task's benchmark size (:data:`BENCHMARKS`), every run on
new inputs and checked against the task's own float64 reference. The vendor's version of the same operation
(cuBLAS, PyTorch's softmax, SDPA) is timed by the same protocol on the same inputs. It writes
``OUT/leaderboard.csv`` (per task: rank, learner, median and quartiles, the fraction of the vendor's speed,
and why an entry earned no speed credit) and ``OUT/leaderboard.json`` with the device's name.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .text import file_name, safe_text

KERNELS = "kernels.json"
MODULE = re.compile(r"course\.tasks\.part\d\d")
TOLERANCE = 1e-3  # of each output's largest magnitude: float32 kernels at benchmark sizes against float64
SEED = 50_000  # benchmark inputs' seeds: run r uses SEED + r, far from every check's seeds
BENCHMARKS: dict[str, dict[str, int]] = {  # task name -> the sizes it is timed at
    "vector_add": {"n": 1 << 22, "threads": 256},
    "matmul": {"m": 1024, "k": 1024, "n": 1024, "block_x": 16, "block_y": 16},
    "tiled_matmul": {"m": 2048, "k": 2048, "n": 2048},
    "row_softmax": {"rows": 8192, "cols": 1024},
    "warp_row_softmax": {"rows": 8192, "cols": 1024},
    "flash_attention": {"n": 2048, "heads": 4},
    "flash_attention_causal": {"n": 2048, "heads": 4},
}


def write_kernels(grades, path: Path, course: str) -> None:
    """OUT/kernels.json from the grades (each with ``kernels`` kept by the grading run), in learner order."""
    entries = [{"learner": file_name(grade.learner), "assignment": file_name(grade.assignment), **kept}
               for grade in grades for kept in grade.kernels]
    entries.sort(key=lambda entry: (entry["learner"], entry["assignment"], str(entry.get("grade_id")),
                                    str(entry.get("task"))))
    path.write_text(json.dumps({"course": course, "kernels": entries}), encoding="utf-8")


def task_of(entry: dict):
    """The Task an entry's kernel passed, found as the kernel runner finds it (its check call's steps)."""
    from .recording import planned_steps

    if not isinstance(entry.get("module"), str) or not MODULE.fullmatch(entry["module"]):
        raise ValueError(f"not a module of the course's checks: {safe_text(entry.get('module'), 80)}")
    keywords = {key: tuple(value) if isinstance(value, list) else value
                for key, value in entry["keywords"].items()}
    steps = planned_steps(importlib.import_module(entry["module"]), entry["function"], entry["arg_count"],
                          keywords)
    task = steps[entry["step"]].task
    if task.name != entry["task"]:
        raise ValueError(f"step {entry['step']} of {entry['function']} is {task.name}, not {entry['task']}")
    return task


def benchmark(task, sizes: dict[str, int] | None = None):
    """``draw(run)``, ``reference(run, arguments)``, the outputs' indexes and the launch configuration of a
    task at its benchmark sizes."""
    from course.tasks.common import Case

    chosen = tuple((sizes or BENCHMARKS[task.name]).items())
    family = task.cases[0].inputs  # a family of the task's own (the checks' first case's)
    cases = {}

    def case(run):
        if run not in cases:
            cases.clear()
            cases[run] = Case(chosen, SEED + run, family)
        return cases[run]

    names = list(task.make_args(case(0)))
    outputs = tuple(names.index(output.name) for output in task.outputs)

    def draw(run):
        return list(task.make_args(case(run)).values())

    def reference(run, arguments):
        expected = task.reference(case(run), dict(zip(names, arguments, strict=True)))
        return [np.asarray(expected[output.name]) for output in task.outputs]

    return draw, reference, outputs, task.configure(case(0)), names


def _launcher(kernel, config) -> Callable:
    grid, block = config[0], config[1]
    shared = config[3] if len(config) > 3 else 0

    def launch(stream, *arguments):
        kernel[grid, block, stream, shared](*arguments)
    return launch


def time_entries(entries: list[dict], device, compile_kernel: Callable, baselines: dict[str, Callable],
                 sizes: dict[str, dict] | None = None, repetitions: int = 10, warmup: int = 2,
                 tasks: set[str] | None = None) -> list[dict]:
    """One row per timed kernel (and per vendor baseline of each task timed), ranked within its task."""
    from .gputiming import time_kernel

    rows, prepared = [], {}
    for entry in entries:
        if tasks is not None and entry.get("task") not in tasks:
            continue
        if entry.get("task") not in (sizes or BENCHMARKS):
            continue
        who = {"task": entry["task"], "learner": entry["learner"], "assignment": entry["assignment"]}
        try:
            task = task_of(entry)
            if task.name not in prepared:
                prepared[task.name] = benchmark(task, (sizes or {}).get(task.name))
            draw, reference, outputs, config, _ = prepared[task.name]
            launch = _launcher(compile_kernel(entry["kernel"]), config)
        except Exception as error:  # noqa: BLE001 (one entry that cannot be built costs only itself)
            rows.append({**who, "refused": f"could not be built: {safe_text(error, 200)}", "times_ms": []})
            continue
        timing = time_kernel(entry["learner"], device, launch, draw, reference, outputs, TOLERANCE,
                             repetitions, warmup)
        rows.append({**who, "refused": timing.refused, "times_ms": timing.times_ms})
    for name, (draw, reference, outputs, _, names) in prepared.items():
        if name in baselines:
            baseline, checked = baselines[name](names)

            def checked_reference(run, arguments, reference=reference, checked=checked):
                expected = reference(run, arguments)
                return [expected[i] for i in checked]
            try:
                timing = time_kernel("vendor", device, baseline, draw, checked_reference,
                                     tuple(outputs[i] for i in checked), TOLERANCE, repetitions, warmup)
                refused, times = timing.refused, timing.times_ms
            except Exception as error:  # noqa: BLE001 (the vendor's library, not a learner, failed)
                refused, times = f"the vendor's operation failed: {safe_text(error, 200)}", []
            rows.append({"task": name, "learner": "(vendor)", "assignment": "", "refused": refused,
                         "times_ms": times})
    return _ranked(rows)


def _ranked(rows: list[dict]) -> list[dict]:
    import statistics

    for row in rows:
        times = row["times_ms"]
        row["median_ms"] = statistics.median(times) if times and not row["refused"] else math.nan
        timed = len(times) > 1 and not row["refused"]
        quartiles = statistics.quantiles(times, n=4) if timed else [math.nan] * 3
        row["q1_ms"], row["q3_ms"] = quartiles[0], quartiles[2]
    vendor = {row["task"]: row["median_ms"] for row in rows if row["learner"] == "(vendor)"}
    for task in {row["task"] for row in rows}:
        ranked = sorted((row for row in rows if row["task"] == task and not row["refused"]),
                        key=lambda row: row["median_ms"])
        for rank, row in enumerate(ranked, 1):
            row["rank"] = rank
            row["of_vendor"] = vendor.get(task, math.nan) / row["median_ms"]
    for row in rows:
        row.setdefault("rank", "-")
        row.setdefault("of_vendor", math.nan)
    return sorted(rows, key=lambda row: (row["task"], row["rank"] == "-", row["median_ms"]))


CSV_COLUMNS = ("task", "rank", "learner", "assignment", "median_ms", "q1_ms", "q3_ms", "of_vendor", "refused")


def write_leaderboard(rows: list[dict], out: Path, device: str) -> None:
    with (out / "leaderboard.csv").open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow([row["task"], row["rank"], row["learner"], row["assignment"],
                             *(f"{row[key]:.4f}" for key in ("median_ms", "q1_ms", "q3_ms", "of_vendor")),
                             row["refused"]])
    (out / "leaderboard.json").write_text(json.dumps({"device": device, "rows": rows}, indent=1))


def plot_leaderboard(rows: list[dict], path: Path, device: str) -> None:
    """A bar per timed entry, grouped by task: its median time as a fraction of the vendor's (longer is
    slower); refused entries are named with why."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{row['task']}: {row['learner']}" for row in rows]
    ratios = [0.0 if row["refused"] or math.isnan(row["of_vendor"]) else 1 / row["of_vendor"]
              for row in rows]
    figure, axis = plt.subplots(figsize=(9, 0.32 * len(rows) + 1.2))
    bars = axis.barh(labels, ratios, color=["#bbbbbb" if row["refused"] else "#4c72b0" for row in rows])
    for bar, row in zip(bars, rows, strict=True):
        text = (f"refused: {row['refused'].split(': ', 1)[-1][:50]}" if row["refused"] else
                f"{row['median_ms']:.3f} ms" + ("" if math.isnan(row["of_vendor"]) else
                                                f", {1 / row['of_vendor']:.2f}x the vendor's time"))
        axis.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, "  " + text, va="center", fontsize=7)
    axis.invert_yaxis()
    axis.set_xlabel("median time / the vendor's median time (1 = as fast as cuBLAS, torch.softmax or SDPA)")
    axis.set_title(f"The class's kernels, timed by the grader on {device}", fontsize=10)
    axis.set_xlim(0, max(ratios + [1.0]) * 1.6)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# ------------------------------------------------------------------------------------------ on the GPU

def vendor_baselines() -> dict[str, Callable]:
    """task name -> (argument names -> (launch(stream, *arguments), indexes into the task's outputs that
    it writes)): the vendor's operation on the grader's stream, through PyTorch."""
    import torch

    def on(stream):
        return torch.cuda.stream(torch.cuda.ExternalStream(int(getattr(stream.handle, "value", None)
                                                                or int(stream.handle))))

    def tensors(arguments):
        return [torch.as_tensor(a, device="cuda") if hasattr(a, "__cuda_array_interface__") else a
                for a in arguments]

    def matmul(names):
        a, b, c = (names.index(name) for name in ("a", "b", "c"))

        def launch(stream, *arguments):
            t = tensors(arguments)
            with on(stream):
                torch.matmul(t[a], t[b], out=t[c])
        return launch, (0,)

    def softmax(names):
        x, out = names.index("x"), names.index("out")

        def launch(stream, *arguments):
            t = tensors(arguments)
            with on(stream):
                torch.softmax(t[x], dim=-1, out=t[out])
        return launch, (0,)

    def attention(causal):
        def make(names):
            q, k, v, o, scale = (names.index(name) for name in ("q", "k", "v", "o", "scale"))

            def launch(stream, *arguments):
                t = tensors(arguments)
                with on(stream):
                    t[o].copy_(torch.nn.functional.scaled_dot_product_attention(
                        t[q], t[k], t[v], is_causal=causal, scale=float(t[scale])))
            return launch, (0,)  # o only: SDPA does not return the log-sum-exp
        return make

    torch.backends.cuda.matmul.allow_tf32 = False
    return {"matmul": matmul, "tiled_matmul": matmul, "row_softmax": softmax, "warp_row_softmax": softmax,
            "flash_attention": attention(False), "flash_attention_causal": attention(True)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grade.gpu", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the --out folder of a grading run with --gpu-kernels")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: all benchmarked)")
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--plot", action="store_true",
                        help="only draw OUT/leaderboard.png from OUT/leaderboard.json (anywhere, no GPU)")
    args = parser.parse_args(argv)
    if args.plot:
        board = json.loads((args.out / "leaderboard.json").read_text(encoding="utf-8"))
        plot_leaderboard(board["rows"], args.out / "leaderboard.png", board["device"])
        return 0
    data = json.loads((args.out / KERNELS).read_text(encoding="utf-8"))
    from numba import cuda

    from course import kernelsource

    from .gputiming import NumbaDevice

    def compile_kernel(spec):
        return cuda.jit(kernelsource.rebuild(spec))

    tasks = set(filter(None, args.tasks.split(","))) or None
    rows = time_entries(data["kernels"], NumbaDevice(), compile_kernel, vendor_baselines(),
                        repetitions=args.repetitions, tasks=tasks)
    name = cuda.get_current_device().name
    write_leaderboard(rows, args.out, name.decode() if isinstance(name, bytes) else str(name))
    for row in rows:
        print(f"{row['task']:24s} {row['rank']!s:>3} {row['learner'][:24]:24s} {row['median_ms']:9.3f} ms "
              f"{row['of_vendor']:6.2f} of the vendor's speed  {row['refused']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
