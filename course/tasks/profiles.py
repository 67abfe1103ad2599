"""The reference solution's profile of a case: every gpusim counter it records, the basis of the budgets.

``profile(task, case)`` looks the case up in the committed table of its part (``profiles/partNN.json``,
written by ``tools/make_profiles.py`` for the visible cases, so check cells never run the reference), and
otherwise runs the reference solution (:mod:`.references`) under gpusim with the case's launch, as
:func:`course.tasks.common.run` runs a learner's kernel but without the compile gate, and keeps the counters
for the rest of the process. Only trusted processes call it: a check cell, the grader's parent. The grader
asks for all its cases first (``prefetch``), measured in a child process, so that the reference solution
and what its setup cell imports (torch, matplotlib) never weigh on the grader itself.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from dataclasses import replace
from pathlib import Path

from . import references

TABLES = Path(__file__).resolve().parent / "profiles"
_RUNNING = threading.Lock()  # gpusim runs one launch at a time per process


class ProfileUnavailable(Exception):
    """The reference's profile of a case is neither in the table nor computable here (and why)."""


def table_path(part: str) -> Path:
    """The table of a part, e.g. part05 -> profiles/part05.json."""
    return TABLES / f"{part}.json"


@functools.cache
def _table(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def stored(task, case) -> dict | None:
    """The profile of a case from the committed table, or None. A contract named "part05.tiled_matmul" keeps
    its profiles in profiles/part05.json under "tiled_matmul"."""
    part, _, name = task.contract.name.partition(".")
    return _table(table_path(part)).get(name, {}).get(task.contract.profile_key(case))


_live: dict[tuple[str, str], dict] = {}


def measure(task, case) -> dict:
    """Run the reference solution on one case and return its counters (raises ProfileUnavailable)."""
    from .common import run

    try:
        learner = references.load(task.contract.solution)
    except references.ReferenceMissing as missing:
        raise ProfileUnavailable(str(missing)) from None
    with _RUNNING:  # the counters are the default schedule's: the other schedules would only cost time
        result = run(replace(task, schedules=None), learner, case, gate=False)
    if result["error"]:
        raise ProfileUnavailable(f"the reference solution itself failed on {case.label()}: "
                                 f"{result['error']['type']}: {result['error']['message'][:300]}")
    return {name: int(value) for name, value in sorted(result["report"].items())}


def profile(task, case) -> dict:
    """The reference's counters on this case: from the table, from this process's cache, or measured."""
    found = stored(task, case)
    if found is not None:
        return found
    key = (task.contract.name, task.contract.profile_key(case))
    if key not in _live:
        _live[key] = measure(task, case)
    return _live[key]


def measured() -> dict[str, dict[str, int]]:
    """The profiles this process measured, by contract name and case key joined with a newline: what the
    grader keeps between runs (course.grade.cache)."""
    return {"\n".join(key): counters for key, counters in _live.items()}


def remember(profiles: dict[str, dict[str, int]]) -> None:
    """Take profiles measured before (as ``measured`` gives them), so that they are not measured again."""
    for joined, counters in profiles.items():
        _live[tuple(joined.split("\n", 1))] = counters


def prefetch(pairs) -> None:
    """Measure the profiles of these (task, case) pairs that neither the table nor this process holds, in a
    forked child process, and keep them here. Pairs whose reference cannot be measured are left out (the
    judge then measures them itself, and reports why not)."""
    missing = {}
    for task, case in pairs:
        if task.contract is None or not task.contract.measured or stored(task, case) is not None:
            continue
        key = (task.contract.name, task.contract.profile_key(case))
        if key not in _live:
            missing.setdefault(key, (task, case))
    if not missing:
        return
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: measure, send the counters as JSON, and leave without cleaning up
        status = 1
        try:
            os.close(read)
            found = {}
            for key, (task, case) in missing.items():
                try:
                    found["\n".join(key)] = measure(task, case)
                except ProfileUnavailable:
                    pass
            with os.fdopen(write, "wb") as pipe:
                pipe.write(json.dumps(found).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status == 0:
        remember(json.loads(data))
