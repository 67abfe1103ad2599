"""Measure the exercise checks by the mutants of the solution cells they kill.

    python -m tools.mutation                      # every solution notebook, 2 workers
    python -m tools.mutation 05 check_softmax_kernel -j 2 --timeout 60 --limit 20 --name mutation_before
    python -m tools.mutation --list 04            # the mutants, without running them

Writes bench/results/<name>.json and .md. Results are appended to a state file as they come (default
.mutation/state.jsonl): a second run skips every mutant whose notebook and course code are unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .notebook import code_cells, notebook_mutants, task_of
from .pool import Pool, fingerprint, load_state
from .summary import markdown, summarize

ROOT = Path(__file__).resolve().parents[2]


def _selected(mutant, task: str, tokens: list[str]) -> bool:
    return not tokens or any(token in (mutant.notebook, mutant.notebook[:2], mutant.grade_id, task)
                             for token in tokens)


def _sample(mutants: list, limit: int | None) -> list:
    """At most `limit` mutants, chosen by id (a hash: a fixed, spread-out choice), kept in source order."""
    if limit is None or len(mutants) <= limit:
        return mutants
    chosen = {m.id for m in sorted(mutants, key=lambda m: m.id)[:limit]}
    return [m for m in mutants if m.id in chosen]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.mutation", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("select", nargs="*",
                        help="notebook stems or numbers (05), solution or check grade_ids")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per mutant (default 60)")
    parser.add_argument("--limit", type=int, help="at most this many mutants per task, a fixed sample")
    parser.add_argument("--name", default="mutation", help="write bench/results/NAME.json and .md")
    parser.add_argument("--state", type=Path, default=ROOT / ".mutation" / "state.jsonl",
                        help="the results file a run appends to and resumes from")
    parser.add_argument("--fresh", action="store_true", help="ignore earlier results in the state file")
    parser.add_argument("--rerun", nargs="+", default=[], metavar="STATUS",
                        help="run again the mutants whose earlier result has this status (survived, "
                             "equivalent, timeout...), e.g. after a change to the battery")
    parser.add_argument("--no-battery", action="store_true", help="no equivalence battery for survivors")
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    options = parser.parse_args(argv)

    paths = {p.stem: p for p in sorted((ROOT / "solutions").glob("*.ipynb"))}
    task_of_cell, chosen, sampled = {}, [], {}
    for stem, path in paths.items():
        cells = code_cells(path)
        by_task: dict[str, list] = {}
        for cell in cells:
            if cell.solution and not cell.graded:
                task_of_cell[(stem, cell.index)] = task_of(cells, cell)
        for mutant in notebook_mutants(path):
            task = task_of_cell[(stem, mutant.cell)]
            if _selected(mutant, task, options.select):
                by_task.setdefault(task, []).append(mutant)
        for task, mutants in by_task.items():
            kept = _sample(mutants, options.limit)
            if len(kept) < len(mutants):
                sampled[f"{stem}/{task}"] = f"{len(kept)} of {len(mutants)}"
            chosen += kept
    if options.list:
        for mutant in chosen:
            print(f"{mutant.id}  {mutant.description}")
        print(f"{len(chosen)} mutants")
        return 0

    fingerprints = {stem: fingerprint(path) for stem, path in paths.items()}
    state = {} if options.fresh else load_state(options.state)
    results = {m.id: state[m.id] for m in chosen
               if m.id in state and state[m.id].get("fingerprint") == fingerprints[m.notebook]
               and state[m.id]["status"] not in options.rerun}
    todo = [m for m in chosen if m.id not in results]
    print(f"{len(chosen)} mutants in {len({m.notebook for m in chosen})} notebooks; {len(results)} already "
          f"measured, {len(todo)} to run on {options.jobs} workers (timeout {options.timeout:g} s).",
          flush=True)
    start = time.time()
    done = [0]

    def progress(mutant, record):
        results[mutant.id] = record
        done[0] += 1
        seconds = record.get("seconds", 0)
        print(f"[{done[0]}/{len(todo)}] {mutant.id} {record['status']:10s} {seconds:6.1f} s  "
              f"{mutant.description[:120]}", flush=True)

    pool = Pool(options.jobs, options.timeout, {"battery": not options.no_battery}, options.state, progress)
    baselines = pool.run(todo, {m.notebook: paths[m.notebook] for m in todo}) if todo else {}

    header = {
        "note": _note(options, chosen, sampled, len(todo), results, time.time() - start),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "command": "python -m tools.mutation " + " ".join(argv if argv is not None else sys.argv[1:]),
        "timeout_s": options.timeout, "jobs": options.jobs, "sampled": sampled,
        "baselines_failing": {stem: b["reason"] for stem, b in baselines.items() if not b["ok"]},
    }
    record = summarize(chosen, results, task_of_cell, header)
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{options.name}.json").write_text(json.dumps(record, indent=1) + "\n")
    text = markdown(record)
    (out / f"{options.name}.md").write_text(text)
    print(text)
    print(f"wrote bench/results/{options.name}.json and .md")
    return 0


def _note(options, chosen, sampled, ran: int, results: dict, seconds: float) -> str:
    """One paragraph on what was measured and how long it took."""
    sample = (f" Sampled (--limit {options.limit} per task, by id): "
              + ", ".join(f"{k} {v}" for k, v in sampled.items()) + "." if sampled else "")
    worked = sum(r.get("seconds", 0) + r.get("battery_seconds", 0) for r in results.values())
    return (f"{len(chosen)} mutants; timeout {options.timeout:g} s per mutant, {options.jobs} workers. This "
            f"run measured {ran} of them in {seconds / 60:.1f} min and reused {len(chosen) - ran} results "
            f"from the state file; all the mutant runs add up to {worked / 60:.0f} worker-minutes.{sample}")


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
