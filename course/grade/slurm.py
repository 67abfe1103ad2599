"""Grade a class on a Slurm cluster: one job array of shards, then a merge job that waits for all of them.

    python -m course.grade.slurm SUBMISSIONS --shards N --out OUT [--sbatch-option=--gres=gpu:1]... [--wait]
                                 [grader options, e.g. --jobs 4 --sandbox bwrap]

Array task K runs ``python -m course.grade SUBMISSIONS --shard K/N --out OUT/shards/K`` and the merge job
(``--dependency=afterany``, so that it also runs, and names the culprit, when a shard failed) runs
``python -m course.grade merge OUT/shards/0 ... OUT/shards/N-1 --out OUT``. Logs go to ``OUT/logs/``. The
course checkout, its Python and the folders must be on a file system that every node sees, as a cluster's
home or project folders are. ``--wait`` returns when the merge job has ended, with its exit status.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from .sandbox import COURSE_ROOT
from .shards import MAX_SHARDS


def _quoted(part: str) -> str:
    """``part`` in single quotes for the shell, where ``@TASK@`` becomes the array task's index."""
    text = "'" + part.replace("'", "'\\''") + "'"
    return text.replace("@TASK@", "'\"$SLURM_ARRAY_TASK_ID\"'")


def _wrap(command: list[str]) -> str:
    """A shell line for sbatch --wrap that runs ``command`` from the course's folder."""
    return f"cd {_quoted(str(COURSE_ROOT))} && exec {' '.join(map(_quoted, command))}"


def commands(submissions: Path, shards: int, out: Path, grader_options: list[str],
             sbatch_options: list[str], sbatch: str = "sbatch") -> tuple[list[str], list[str]]:
    """The two sbatch command lines: the array of shards, and the merge (whose dependency is added once the
    array's job id is known)."""
    python, logs = sys.executable, out / "logs"
    grade = [python, "-m", "course.grade", str(submissions.resolve()), "--shard", f"@TASK@/{shards}",
             "--out", str(out / "shards" / "@TASK@"), *grader_options]
    array = [sbatch, "--parsable", f"--array=0-{shards - 1}", "--job-name=course-grade",
             f"--output={logs / 'shard-%a.log'}", *sbatch_options, f"--wrap={_wrap(grade)}"]
    merge = [python, "-m", "course.grade", "merge", *(str(out / "shards" / str(k)) for k in range(shards)),
             "--out", str(out)]
    merging = [sbatch, "--parsable", "--job-name=course-grade-merge", f"--output={logs / 'merge.log'}",
               f"--wrap={_wrap(merge)}"]
    return array, merging


def submit(submissions: Path, shards: int, out: Path, grader_options: list[str], sbatch_options: list[str],
           wait: bool) -> int:
    out = out.resolve()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    array, merging = commands(submissions, shards, out, grader_options, sbatch_options)
    job = subprocess.run(array, capture_output=True, text=True, check=True).stdout.strip().split(";")[0]
    print(f"Submitted the array of {shards} shards as job {job}; logs in {out / 'logs'}/")
    merging[2:2] = [f"--dependency=afterany:{job}", *(["--wait"] if wait else [])]
    if not wait:
        merged = subprocess.run(merging, capture_output=True, text=True, check=True).stdout.strip()
        print(f"Submitted the merge as job {merged}: {out / 'grades.csv'} when it has run")
        return 0
    finished = subprocess.run(merging, capture_output=True, text=True)
    print(f"The merge job ended with status {finished.returncode}: see {out / 'logs' / 'merge.log'}")
    return finished.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grade.slurm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--shards", type=int, required=True, help=f"array tasks, 1 to {MAX_SHARDS}")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sbatch-option", action="append", default=[], metavar="OPTION",
                        help="passed to sbatch for the shards, e.g. --sbatch-option=--time=1:00:00")
    parser.add_argument("--wait", action="store_true", help="return when the merge job has ended")
    args, grader_options = parser.parse_known_args(argv)
    if not 1 <= args.shards <= MAX_SHARDS:
        parser.error(f"--shards must lie in 1..{MAX_SHARDS}")
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    try:
        return submit(args.submissions, args.shards, args.out, grader_options, args.sbatch_option, args.wait)
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or error
        print(f"error: sbatch failed: {detail}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
