"""Grading a class in shards, on many machines, and merging what they wrote into one class's output.

``python -m course.grade SUBMISSIONS --shard K/N`` grades the learners whose place in the class, in the
order of their folder names' bytes, is K modulo N (K from 0 to N-1, as Slurm's array task ids and
Kubernetes' completion indexes count), and writes :data:`MANIFEST` beside ``grades.csv`` as its very last
step: a shard without one did not finish. ``python -m course.grade merge OUT_0 ... OUT_N-1 --out OUT``
checks that every shard from 0 to N-1 is there once, finished, graded the same course, and that no learner
appears twice, and only then writes ``OUT/grades.csv`` and ``OUT/feedback/``. Anything else is refused, with
each missing or failed shard named: a class's CSV is never written with learners silently left out.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from .reports import CSV_COLUMNS
from .text import file_name, safe_text

MANIFEST = "shard.json"
MAX_SHARDS = 10_000


class ShardError(Exception):
    """The shards cannot be merged: the message names each one that is missing, unfinished or inconsistent."""


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"K/N"`` with 0 <= K < N; a ValueError says what is wrong."""
        index, slash, count = text.partition("/")
        if not slash or not index.isdigit() or not count.isdigit():
            raise ValueError(f"{text!r} is not K/N (shard K of N, counted from 0)")
        shard = cls(int(index), int(count))
        if not 0 < shard.count <= MAX_SHARDS or shard.index >= shard.count:
            raise ValueError(f"shard {text!r}: K must lie in 0..N-1 and N in 1..{MAX_SHARDS}")
        return shard

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def picks(self, names: list[str]) -> set[str]:
        """The names (learners' folder names) this shard grades: every N-th in byte order, from the K-th."""
        ordered = sorted(names, key=os.fsencode)
        return set(ordered[self.index::self.count])


def write_manifest(out: Path, shard: Shard, learners: list[str], course: str) -> None:
    """Say that this shard finished, which learners it graded and with which course code (written last)."""
    manifest = {"shard": shard.index, "shards": shard.count, "course": course,
                "learners": sorted(file_name(name) for name in learners)}
    partial = out / f".{MANIFEST}.partial"
    partial.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    partial.replace(out / MANIFEST)


@dataclass(frozen=True)
class Finished:
    folder: Path
    manifest: dict
    rows: list[list[str]]


def _read_shard(folder: Path) -> Finished | str:
    """A shard's output, or why it cannot be merged."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"no {MANIFEST}: the shard did not finish (see its job's log)"
    except (OSError, ValueError) as error:
        return f"{MANIFEST} cannot be read ({safe_text(error, 120)})"
    fields = {"shard": int, "shards": int, "course": str, "learners": list}
    if not isinstance(manifest, dict) or any(not isinstance(manifest.get(key), kind)
                                             for key, kind in fields.items()):
        return f"{MANIFEST} is not a shard's manifest"
    try:
        with (folder / "grades.csv").open(newline="", encoding="utf-8") as file:
            rows = list(csv.reader(file))
    except (OSError, ValueError) as error:
        return f"grades.csv cannot be read ({safe_text(error, 120)})"
    if not rows or tuple(rows[0]) != CSV_COLUMNS or any(len(row) != len(CSV_COLUMNS) for row in rows[1:]):
        return "grades.csv does not have the grader's columns"
    return Finished(folder, manifest, rows[1:])


def _check(shards: dict[Path, Finished | str]) -> list[Finished]:
    """The finished shards, one per index from 0 to N-1, or a ShardError naming every problem."""
    problems = [f"{folder}: {result}" for folder, result in shards.items() if isinstance(result, str)]
    finished = [result for result in shards.values() if isinstance(result, Finished)]
    counts = {result.manifest["shards"] for result in finished}
    courses = {result.manifest["course"] for result in finished}
    if len(counts) > 1:
        problems.append(f"the shards were cut for different class sizes: N = {sorted(counts)}")
    if len(courses) > 1:
        problems.append("the shards graded different course code (their course digests differ): grade them "
                        "again from one checkout")
    seen: dict[int, Path] = {}
    for result in finished:
        index = result.manifest["shard"]
        if not 0 <= index < result.manifest["shards"]:
            problems.append(f"{result.folder}: shard {index} of {result.manifest['shards']} does not exist")
        if index in seen:
            problems.append(f"shard {index} appears twice: {seen[index]} and {result.folder}")
        seen[index] = result.folder
    if len(counts) == 1:
        count = counts.pop()
        problems += [f"shard {index} of {count}: no finished output among the folders given"
                     for index in sorted(set(range(count)) - set(seen))]
    owner: dict[str, int] = {}
    for result in finished:
        for learner in result.manifest["learners"]:
            if learner in owner:
                problems.append(f"learner {safe_text(learner, 80)} was graded by shards {owner[learner]} and "
                                f"{result.manifest['shard']}")
            owner[learner] = result.manifest["shard"]
    if problems or not finished:
        raise ShardError("cannot merge the shards:\n" + "\n".join(f"  - {line}" for line in problems
                                                                  or ["no shard folders given"]))
    return sorted(finished, key=lambda result: result.manifest["shard"])


def _copy_feedback(source: Path, target: Path) -> int:
    """Copy a shard's feedback tree (regular files only, never following a link); the number of files."""
    copied = 0
    for parent, folders, files in os.walk(source):
        folders[:] = [name for name in folders if not os.path.islink(os.path.join(parent, name))]
        for name in files:
            path = Path(parent) / name
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            destination = target / path.relative_to(source)
            if destination.exists():
                raise ShardError(f"two shards wrote the feedback file {destination.relative_to(target)}")
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
            copied += 1
    return copied


def merge(folders: list[Path], out: Path) -> str:
    """Merge the shards' outputs into ``out``: grades.csv ordered as one machine orders it, and every
    feedback file. Returns a summary line; raises ShardError, writing nothing, when a shard is missing."""
    shards = _check({folder: _read_shard(folder) for folder in folders})
    rows = [row for shard in shards for row in shard.rows]
    rows.sort(key=lambda row: (row[0], row[1]))  # stable: each notebook's tasks keep their order
    out.mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(exist_ok=True)
    files = sum(_copy_feedback(shard.folder / "feedback", out / "feedback") for shard in shards
                if (shard.folder / "feedback").is_dir())
    with (out / "grades.csv").open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(CSV_COLUMNS)
        writer.writerows(rows)
    learners = sum(len(shard.manifest["learners"]) for shard in shards)
    return (f"Merged {len(shards)} shards: {learners} learners, {len(rows)} rows, {files} feedback files, in "
            f"{out / 'grades.csv'} and {out / 'feedback'}/")
