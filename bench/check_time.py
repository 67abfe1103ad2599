"""Seconds each solved exercise notebook spends in its check cells, on this machine's CPU.

Runs every solution notebook's code cells in one process (as tests/notebook_runs.py does), timing each graded
cell. The figure per notebook is the sum over its graded cells: the time a learner waits for the checks of a
solved notebook. Compare only figures from one machine, and at one load: the record keeps the load average
before and after the run (on a shared machine, time the two versions one after the other).

    .venv/bin/python bench/check_time.py [--save NAME] [notebook stems...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import linecache
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("COURSE_MODE", "cpu")
os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(ROOT / "tests"))

from notebook_runs import code_cells  # noqa: E402


def time_checks(path: Path) -> dict[str, float]:
    """Seconds per graded cell of one notebook, its cells run in order in one namespace."""
    namespace: dict = {"__name__": "__main__"}
    seconds = {}
    previous = Path.cwd()
    os.chdir(path.parent)
    try:
        for cell in code_cells(path):
            source = cell["source"]
            if source.lstrip().startswith(("%", "!")):
                continue
            filename = f"<{path.stem} cell {cell['index'] + 1}>"
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, filename, "exec"), namespace)
            if cell["graded"]:
                seconds[cell["grade_id"]] = time.perf_counter() - start
    finally:
        os.chdir(previous)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stems", nargs="*", help="solution notebooks to time (default: all)")
    parser.add_argument("--save", help="write bench/results/check_time_<NAME>.json")
    options = parser.parse_args()
    paths = sorted(ROOT.glob("solutions/*.ipynb"))
    if options.stems:
        paths = [p for p in paths if p.stem in options.stems or p.stem[:2] in options.stems]
    results = {}
    load_before = os.getloadavg()
    for path in paths:
        cells = time_checks(path)
        results[path.stem] = {"total_s": round(sum(cells.values()), 2),
                              "cells": {k: round(v, 2) for k, v in cells.items()}}
        print(f"{path.stem:40s} {sum(cells.values()):7.2f} s  ({len(cells)} check cells)", flush=True)
    record = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                         f"Python {platform.python_version()}",
              "load_average_1_5_15_min": {"before": [round(x, 2) for x in load_before],
                                          "after": [round(x, 2) for x in os.getloadavg()]},
              "notebooks": results}
    if options.save:
        out = ROOT / "bench" / "results" / f"check_time_{options.save}.json"
        out.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
