"""Grade a folder of submitted exercise notebooks: ``python -m course.grade SUBMISSIONS [options]``.

Writes OUT/grades.csv and OUT/feedback/<learner>/<assignment>.md, shows one line per graded notebook and
prints a summary. Deadlines come from timing the reference solutions first, unless --timeout is given.
With ``--shard K/N`` only a 1/N of the learners is graded; ``python -m course.grade merge OUT_0 ... --out
OUT`` merges the shards (:mod:`.shards`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from course.tasks import profiles

from .assignments import load_assignments
from .cache import DEFAULT_FOLDER, GraderCache, course_digest
from .cgroups import DELEGATED, Budget, Cgroups, delegation_command
from .discovery import find_learners, one_learner, select, unanswered
from .gpu import KERNELS, write_kernels
from .grading import (
    SubmissionGrade,
    calibrated_limits,
    grade_all,
    reference_grades,
    refused,
)
from .judging import PASSED
from .limits import SUBMISSION_PROCESSES, Limits
from .reports import MAX_REASON, number, summary, write_csv, write_feedback
from .sandbox import COURSE_ROOT, Sandbox, SandboxError
from .shards import Shard, ShardError, merge, write_manifest
from .text import file_name, safe_text

DEFAULT_SOURCES = COURSE_ROOT / "solutions"
DEFAULT_MEMORY_MB = 2048
DEFAULT_NOTEBOOK_MB = 32
FIXED_SETUP_S = 60.0  # the deadline for running a notebook's cells when --timeout replaces calibration


def _limits(names: list[str], args, assignments, sandbox: Sandbox, kept: GraderCache,
            echo) -> dict[str, Limits]:
    memory = args.memory_mb * 2**20
    cpu_time = sandbox.cgroups is not None and sandbox.cgroups.location is not None
    unit = "s of CPU time" if cpu_time else "s"
    if args.timeout:
        return {name: Limits(FIXED_SETUP_S, args.timeout, memory) for name in names}
    limits = {name: kept.limits[name] for name in names if cpu_time and name in kept.limits}
    if limits:
        echo(f"Deadlines of {', '.join(sorted(limits))} from the reference solutions' CPU times measured "
             f"before, on this machine and this course code ({kept.path})")
    names = [name for name in names if name not in limits]
    if not names:
        return limits
    echo(f"Timing the reference solutions of {', '.join(names)} ...")
    references = reference_grades(args.sources, {name: assignments[name] for name in names}, memory,
                                  args.jobs, sandbox, args.max_notebook_mb * 2**20)
    for name, reference in sorted(references.items()):
        for task in reference.tasks:
            if task.status != PASSED:
                echo(f"warning: the reference solution of {name} does not pass {task.task.grade_id}: "
                     f"{task.reason}")
        limits[name] = calibrated_limits(reference, memory)
        echo(f"  {name}: {limits[name].call_s:.1f} {unit} per request, {limits[name].setup_s:.0f} {unit} for "
             f"the notebook's cells")
    if cpu_time:  # wall-clock times depend on how busy the machine is: they are never kept
        kept.save(profiles.measured(), {**kept.limits, **limits})
    return limits


def grade_folder(args, echo: Callable[[str], None] = print) -> list[SubmissionGrade]:
    """Grade every submission under ``args.submissions``; write the CSV and feedback under ``args.out``."""
    start = time.monotonic()
    max_bytes = args.max_notebook_mb * 2**20
    assignments, problems = load_assignments(args.sources)
    kept = GraderCache(args.cache, args.sources, assignments, args.memory_mb * 2**20, args.sandbox)
    profiles.remember(kept.profiles)
    profiles.prefetch([(step.task, case) for assignment in assignments.values() for task in assignment.tasks
                       for call in task.calls for step in call.steps if step.task.contract is not None
                       for case in step.task.cases])
    for name, problem in problems.items():
        echo(f"warning: the source notebook {name} cannot be used: {problem}")
    if args.one_learner:
        learners, orphans = [one_learner(args.submissions, args.one_learner)], []
    else:
        learners, orphans = find_learners(args.submissions)
    if args.shard:
        picked = args.shard.picks([learner.name for learner in learners])
        learners = [learner for learner in learners if learner.name in picked]
        orphans = orphans if args.shard.index == 0 else []
        echo(f"Shard {args.shard}: {len(learners)} learners")
    for orphan in orphans:
        echo(f"skipped {safe_text(orphan, MAX_REASON)}: put each learner's notebooks in a folder named after "
             f"the learner")
    for learner in learners:
        for skipped in learner.skipped:
            echo(f"{file_name(learner.name)}: {safe_text(skipped, MAX_REASON)}")
    args.out.mkdir(parents=True, exist_ok=True)
    cgroups = Cgroups(Budget(args.memory_mb * 2**20, SUBMISSION_PROCESSES), args.jobs)
    sandbox = Sandbox(args.sandbox, [args.sources, args.submissions, args.out], cgroups)
    try:
        isolation = sandbox.statement()
        for line in isolation:
            echo(line)
        selections = [select(learner, assignments, max_bytes) for learner in learners]
        handed_in = {s.assignment for selection in selections for s in selection.submissions}
        refused_names = {r.assignment for selection in selections for r in selection.refusals}
        names = sorted(handed_in | (refused_names & assignments.keys()))
        for learner, selection in zip(learners, selections, strict=True):
            selection.refusals += unanswered(learner, selection, sorted({*names, *args.assignment}))
        kept.save(profiles.measured(), kept.limits)
        limits = _limits(names, args, assignments, sandbox, kept, echo) if names else {}
        limits.update({name: Limits(FIXED_SETUP_S, args.timeout or FIXED_SETUP_S, args.memory_mb * 2**20)
                       for name in assignments.keys() - limits.keys()})

        def progress(done: int, total: int, grade: SubmissionGrade) -> None:
            score = f"{number(grade.points)}/{number(grade.max_points)} points" if grade.tasks else \
                "not graded"
            how = safe_text(grade.problem, MAX_REASON) if grade.problem else f"{grade.seconds:.1f} s"
            name = f"{file_name(grade.learner)}/{file_name(grade.assignment)}"
            echo(f"[{done:{len(str(total))}}/{total}] {name}: {score} ({how})")

        submissions = [submission for selection in selections for submission in selection.submissions]
        grades = grade_all(submissions, assignments, limits, sandbox, max_bytes, args.jobs, progress,
                           keep_kernels=args.gpu_kernels)
    finally:
        sandbox.close()
    grades += [refused(refusal, assignments) for selection in selections for refusal in selection.refusals]
    write_csv(grades, args.out / "grades.csv")
    write_feedback(grades, args.out / "feedback")
    echo(summary(grades, time.monotonic() - start, args.jobs, isolation))
    busy = [grade for grade in grades if any(outcome.verdict.grader_problem
                                             for task in grade.tasks for outcome in task.calls)]
    if busy:
        echo(f"WARNING: the machine was too busy to run some checks of {len(busy)} notebook(s), even when "
             f"tried again: a grader problem, marked so in their rows. Grade them again on a quieter "
             f"machine: "
             + ", ".join(f"{file_name(grade.learner)}/{file_name(grade.assignment)}" for grade in busy[:5]))
    if args.gpu_kernels:
        write_kernels(grades, args.out / KERNELS, course_digest(args.sources, assignments))
    if args.shard:
        write_manifest(args.out, args.shard, [learner.name for learner in learners],
                       course_digest(args.sources, assignments))
    echo(f"Wrote {args.out / 'grades.csv'} and {args.out / 'feedback'}/")
    return grades


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m course.grade", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path,
                        help="folder of learner folders (alice/01_kernels_in_python.ipynb) or an nbgrader "
                             "course's submitted/<learner>/<assignment>/ tree")
    parser.add_argument("--out", type=Path, default=Path("graded"), help="where to write (default: graded/)")
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES,
                        help="the source notebooks with solutions and hidden tests (default: solutions/)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded at once")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds of the submission's CPU time per check call, wall-clock seconds where "
                             "there are no cgroups (default: from the reference solution's times)")
    parser.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB,
                        help="memory limit per worker process, and per submission (all its processes) where "
                             "there are cgroups")
    parser.add_argument("--max-notebook-mb", type=int, default=DEFAULT_NOTEBOOK_MB,
                        help="larger notebooks are refused (default: %(default)s)")
    parser.add_argument("--sandbox", choices=("auto", "bwrap", "off"), default="auto",
                        help="confine workers with bubblewrap: auto (where it works, else say what is not "
                             "isolated), bwrap (required) or off")
    parser.add_argument("--cache", type=lambda text: Path(text) if text else None, default=DEFAULT_FOLDER,
                        help="where the reference solutions' counters and CPU times are kept for the next "
                             "run of the same course code on this machine; '' keeps nothing (default: "
                             "%(default)s)")
    parser.add_argument("--one-learner", metavar="NAME", default="",
                        help="SUBMISSIONS is one learner's folder of notebooks, graded under this name (as "
                             "the Gradescope and PrairieLearn entry points do)")
    parser.add_argument("--assignment", action="append", default=[], metavar="NAME",
                        help="grade this assignment for every learner, handed in or not (repeatable; "
                             "default: every assignment that someone handed in)")
    parser.add_argument("--shard", type=Shard.parse, default=None, metavar="K/N",
                        help="grade only every N-th learner, from the K-th (0 <= K < N) in the order of "
                             "their folder names, and write shard.json last; merge with 'python -m "
                             "course.grade merge'")
    parser.add_argument("--gpu-kernels", action="store_true",
                        help=f"also write OUT/{KERNELS}: the kernels of every passed task that the grader "
                             f"launches, as specs, for 'python -m course.grade.gpu OUT' on a GPU machine")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    unknown = [name for name in args.assignment if not (args.sources / f"{name}.ipynb").is_file()]
    if unknown:
        parser.error(f"no source notebook for --assignment {', '.join(unknown)} in {args.sources}")
    return args


def merge_main(argv: list[str]) -> int:
    """``python -m course.grade merge OUT_0 OUT_1 ... --out OUT``: one class's output from its shards."""
    parser = argparse.ArgumentParser(prog="python -m course.grade merge",
                                     description="Merge the outputs of 'python -m course.grade --shard K/N' "
                                                 "for every K into one grades.csv and feedback tree.")
    parser.add_argument("shards", type=Path, nargs="+", help="the shards' --out folders, every one of them")
    parser.add_argument("--out", type=Path, required=True, help="where to write the class's output")
    args = parser.parse_args(argv)
    try:
        print(merge(args.shards, args.out))
    except ShardError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    sys.stdout.reconfigure(errors="replace")  # a terminal that cannot show a learner's name shows "?"
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["merge"]:
        return merge_main(arguments[1:])
    args = parse_args(argv)
    delegated = delegation_command([sys.executable, "-m", "course.grade",
                                    *(sys.argv[1:] if argv is None else argv)])
    if delegated is not None:  # an ordinary user: again, in a systemd scope whose cgroup is this user's
        os.execvpe(delegated[0], delegated, {**os.environ, DELEGATED: "1"})
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupted)
    try:
        grade_folder(args)
    except SandboxError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: every worker was stopped, and the run's cgroups removed",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
