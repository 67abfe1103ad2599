"""Seconds each solved exercise notebook spends in its check cells, on this machine's CPU.

Runs each solution notebook in a Jupyter kernel of its own (nbclient), as a learner's runs it (so a check pays
for what it is first to import or compile), timing each graded cell. The figure
per notebook is the sum over its graded cells: the time a learner waits for the checks of a solved notebook.
Each notebook runs --repeat times (in turn, so a burst of load spreads over all of them); the record keeps
the median of each cell and of each total. Compare only figures from one machine, and at one load: the
record keeps the load average before and after the run (to compare two versions of the course, time them
one right after the other: PYTHONPATH chooses the course package).

    .venv/bin/python bench/check_time.py [--save NAME] [--repeat 3] [notebook stems...]
    .venv/bin/python bench/check_time.py --against ../baseline --save NAME   # two versions, interleaved

With --against (another checkout of the course, e.g. a git worktree of an older commit), every run of a
notebook here is followed by a run of the same notebook there, and the record holds both and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
CELL_TIMEOUT_S = 300


def time_checks(root: Path, stem: str) -> dict[str, float]:
    """Seconds per graded cell of one solution notebook of the course checkout `root` (its course package
    imported), run top to bottom by a Jupyter kernel of its own (nbclient), as a learner's; each cell's
    time runs from the kernel starting it to its reply (nbclient's record)."""
    path = root / "solutions" / f"{stem}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    env.update(COURSE_MODE="cpu", MPLBACKEND="Agg", PYDEVD_DISABLE_FILE_VALIDATION="1",
               PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    with client.setup_kernel(env=env):
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
    seconds = {}
    for cell in notebook.cells:
        nbgrader = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and nbgrader.get("grade"):
            stamps = cell.metadata["execution"]
            started, replied = (datetime.fromisoformat(stamps[key].replace("Z", "+00:00"))
                                for key in ("iopub.execute_input", "shell.execute_reply"))
            seconds[nbgrader["grade_id"]] = (replied - started).total_seconds()
    return seconds


def commit_of(root: Path) -> str:
    """The commit a checkout is at, with "+changes" where its files differ from it."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("+changes" if git("status", "--porcelain", "-uno") else "")


def summarize(cells_per_run: list[dict]) -> dict:
    """Median total and median per cell of several runs of one notebook."""
    totals = [sum(cells.values()) for cells in cells_per_run]
    return {"total_s": round(statistics.median(totals), 2), "totals_s": [round(t, 2) for t in totals],
            "cells": {name: round(statistics.median(cells[name] for cells in cells_per_run), 2)
                      for name in cells_per_run[0]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stems", nargs="*", help="solution notebooks to time (default: all)")
    parser.add_argument("--save", help="write bench/results/check_time_<NAME>.json")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each notebook (default 3)")
    parser.add_argument("--against", type=Path, help="another checkout of the course to time in turn")
    options = parser.parse_args()
    paths = sorted(ROOT.glob("solutions/*.ipynb"))
    if options.stems:
        paths = [p for p in paths if p.stem in options.stems or p.stem[:2] in options.stems]
    roots = {"here": ROOT, **({"against": options.against.resolve()} if options.against else {})}
    load_before = os.getloadavg()
    runs = {(version, path.stem): [] for path in paths for version in roots}
    for _ in range(options.repeat):
        for path in paths:
            for version, root in roots.items():
                runs[version, path.stem].append(time_checks(root, path.stem))
    results = {}
    for path in paths:
        result = {version: summarize(runs[version, path.stem]) for version in roots}
        line = f"{path.stem:40s} {result['here']['total_s']:7.2f} s"
        if options.against:
            result["ratio"] = round(result["here"]["total_s"] / result["against"]["total_s"], 2)
            line += f"  against {result['against']['total_s']:.2f} s: {result['ratio']:.2f}x"
        results[path.stem] = result
        print(line + f"  (runs {', '.join(f'{t:.2f}' for t in result['here']['totals_s'])})", flush=True)
    if options.against:
        here, there = (sum(r[v]["total_s"] for r in results.values()) for v in ("here", "against"))
        print(f"{'all':40s} {here:7.2f} s  against {there:.2f} s: {here / there:.2f}x")
    record = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                         f"Python {platform.python_version()}",
              "method": f"each notebook in a Jupyter kernel of its own, {options.repeat} runs, medians",
              "commits": {version: commit_of(root) for version, root in roots.items()},
              "load_average_1_5_15_min": {"before": [round(x, 2) for x in load_before],
                                          "after": [round(x, 2) for x in os.getloadavg()]},
              "notebooks": results}
    if options.save:
        out = ROOT / "bench" / "results" / f"check_time_{options.save}.json"
        out.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
