"""Write course/tasks/profiles/partNN.json: the reference solution's gpusim counters on every visible case
and every explicit example (hidden ones included: they are in the contracts' source anyway).

    python tools/make_profiles.py           # write the tables
    python tools/make_profiles.py --check   # fail, naming the tasks, if a table is not what this writes

Check cells look a case's reference profile up in these tables instead of running the reference solution
(course/tasks/profiles.py); the cases that hidden seeds draw, shrunk cases and the grader's are measured. A
table is stale when a reference solution, a contract's examples or its drawn cases change: rerun this.
"""

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("COURSE_MODE", "cpu")

import utils  # noqa: E402, F401  (picks the simulator before numba is imported)
from course.tasks import profiles  # noqa: E402


def part_modules() -> list:
    """The part modules whose tasks have contracts."""
    modules = [importlib.import_module(f"course.tasks.{path.stem}")
               for path in sorted((ROOT / "course" / "tasks").glob("part[0-9][0-9].py"))]
    return [module for module in modules if any(task.contract and task.contract.measured
                                                for task in module.TASKS)]


def hidden_examples(contract) -> list:
    """The cases of a contract's hidden explicit examples, where the profile depends on the sizes only."""
    return [] if contract.values_matter else contract.explicit_cases((0,), hidden=True)


def tables() -> dict[str, str]:
    """Table file name -> its JSON text, measured now."""
    texts = {}
    for module in part_modules():
        table: dict[str, dict] = {}
        for task in module.TASKS:
            if task.contract is None or not task.contract.measured:
                continue
            part, _, name = task.contract.name.partition(".")
            table[name] = {task.contract.profile_key(case): profiles.measure(task, case)
                           for case in (*task.cases, *hidden_examples(task.contract))}
        texts[profiles.table_path(part).name] = _json(table)
    return texts


def _json(table: dict) -> str:
    """The table as JSON, one line per case, in a stable order (so that a change shows as a small diff)."""
    tasks = []
    for name, cases in sorted(table.items()):
        rows = ",\n".join(f"  {json.dumps(key)}: {json.dumps(counters, sort_keys=True)}"
                          for key, counters in sorted(cases.items()))
        tasks.append(f" {json.dumps(name)}: {{\n{rows}\n }}")
    return "{\n" + ",\n".join(tasks) + "\n}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check that the tables are up to date")
    options = parser.parse_args()
    texts = tables()
    if options.check:
        stale = [name for name, text in texts.items()
                 if not (profiles.TABLES / name).is_file() or (profiles.TABLES / name).read_text() != text]
        for name in stale:
            print(f"course/tasks/profiles/{name} is not what the reference solutions measure: run "
                  f"`python tools/make_profiles.py`.", file=sys.stderr)
        return 1 if stale else 0
    profiles.TABLES.mkdir(exist_ok=True)
    for name, text in texts.items():
        (profiles.TABLES / name).write_text(text)
        print(f"course/tasks/profiles/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
