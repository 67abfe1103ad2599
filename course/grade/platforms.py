"""The grader behind Gradescope and PrairieLearn: one learner's files in, the platform's results.json out.

    python -m course.grade.platforms gradescope   [--root /autograder] [--assignment NAME]... [grader options]
    python -m course.grade.platforms prairielearn [--root /grade] [--assignment NAME]... [grader options]
    python -m course.grade.platforms package --assignment NAME... --out autograder.zip

Both platforms run one container per submission. The entry point grades the submitted folder as one learner
with :func:`course.grade.__main__.grade_folder`, the sandbox and deadlines included, so a submission gets
exactly the points ``make grade`` gives it, and then writes the platform's results file (Gradescope:
``/autograder/results/results.json``, its documented ``tests`` with ``score``, ``max_score``, ``output``
and ``visibility``; PrairieLearn: ``/grade/results/results.json``, ``gradable``, ``score`` in [0, 1] and
``tests`` with ``points`` and ``max_points``). The file is written last, by renaming, after the grader has
stopped the submission's workers, so nothing the learner's code wrote there survives. Feedback is the same
text as the feedback files': of hidden tests one bit per task, never their inputs. On Gradescope the points
of a task with hidden tests sit in a test whose visibility ``--hidden-visibility`` sets (default
``after_published``), and the visible tests' messages in a test of no points that is always shown.

``package`` builds Gradescope's autograder zip: ``setup.sh`` and ``run_autograder`` at its root, beside the
course code and the chosen assignments' source notebooks.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import tempfile
import traceback
import zipfile
from pathlib import Path

from .__main__ import DEFAULT_SOURCES, grade_folder, parse_args
from .grading import SubmissionGrade
from .reports import hidden_feedback, number, task_feedback, visible_feedback
from .sandbox import COURSE_ROOT
from .text import MAX_NAME_BYTES, file_name, safe_text

LEARNER = "learner"  # the one learner's name in the grader's own output
MAX_RESULTS_BYTES = 900_000  # PrairieLearn refuses results over 1 MB; Gradescope's page slows long before
MAX_NOTE = 2000
VISIBILITIES = ("visible", "after_due_date", "after_published")
PACKAGED = ("course", "gpusim", "utils.py", "pyproject.toml", "requirements.txt")
SKIPPED = ("__pycache__", ".pyc", "gpusim/tests")
GRADER_FAILED = ("The autograder itself failed on this submission (not your code's doing): tell your "
                 "instructor. Nothing was graded.")

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image (Ubuntu 24.04 base image: Python 3.12).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip bubblewrap > /dev/null
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "The course needs Python 3.11 or newer: choose Gradescope's Ubuntu 24.04 base image."; exit 1; }
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install -q --upgrade pip
/autograder/venv/bin/pip install -q -r /autograder/source/requirements.txt
/autograder/venv/bin/pip install -q --no-deps -e /autograder/source/gpusim -e /autograder/source
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, in /autograder; it always writes results/results.json.
# AUTOGRADER_ROOT and COURSE_PYTHON point it elsewhere (the course's tests lay the platform out in a folder).
set -uo pipefail
root="${{AUTOGRADER_ROOT:-/autograder}}"
cd "$root/source"
exec "${{COURSE_PYTHON:-/autograder/venv/bin/python}}" -m course.grade.platforms gradescope --root "$root" \\
  {assignments}
"""


def _capped(text: str, limit: int) -> str:
    return safe_text(text, limit, lines=True)


def _notebook_lines(grade: SubmissionGrade, points: bool = True) -> list[str]:
    lines = [f"{file_name(grade.assignment)}: {number(grade.points)} of {number(grade.max_points)} points."
             if points else f"{file_name(grade.assignment)}:"]
    if grade.problem:
        lines.append(f"This notebook could not be graded: {safe_text(grade.problem, MAX_NOTE)}.")
    lines += [f"- {safe_text(note, MAX_NOTE)}" for note in grade.notes]
    return lines if points or len(lines) > 1 else []


def _summary(grades: list[SubmissionGrade], points: bool = True) -> str:
    """The notebooks' notes; with their points unless ``points`` is false (they would tell hidden results)."""
    if not grades:
        return "No files were handed in."
    return "\n".join(line for grade in grades for line in _notebook_lines(grade, points))


FENCE = re.compile(r"`{3,}(text)?")


def _plain(lines: list[str]) -> str:
    """Feedback lines as plain text (the platforms show it in a <pre>): the Markdown fences left out."""
    return "\n".join(line for line in lines if not FENCE.fullmatch(line)).strip()


def gradescope_results(grades: list[SubmissionGrade], hidden_visibility: str = "after_published") -> dict:
    """Gradescope's results.json for one submission's grades (docs: autograder specifications)."""
    tests = []
    for grade in grades:
        assignment = file_name(grade.assignment)
        if not grade.tasks:
            tests.append({"name": assignment, "score": 0, "max_score": 0, "status": "failed",
                          "visibility": "visible", "output": _capped(grade.problem, MAX_NOTE)})
        for task in grade.tasks:
            name = f"{assignment} / {task.task.grade_id}"
            status = "passed" if task.points == task.task.points else "failed"
            scored = {"name": name, "score": task.points, "max_score": task.task.points, "status": status}
            if not any(call.hidden for call in task.task.calls) or not task.calls:
                tests.append({**scored, "visibility": "visible", "output": _plain(task_feedback(task))})
                continue
            tests.append({"name": f"{name}: visible tests", "score": 0, "max_score": 0,
                          "visibility": "visible", "output": _plain(visible_feedback(task))})
            tests.append({**scored, "visibility": hidden_visibility,
                          "output": _plain(hidden_feedback(task))})
    shown = hidden_visibility == "visible" or not any(call.hidden for grade in grades for task in grade.tasks
                                                      for call in task.task.calls)
    results = {"score": sum(grade.points for grade in grades), "output": _summary(grades, shown),
               "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}
    return _within_limit(results)


def prairielearn_results(grades: list[SubmissionGrade]) -> dict:
    """PrairieLearn's external-grader results.json for one submission's grades (docs: external grading).
    Gradable when a notebook was read; a submission with none is not, and says why in ``format_errors``."""
    if not any(grade.path is not None for grade in grades):
        reasons = [safe_text(grade.problem or next((t.reason for t in grade.tasks), ""), MAX_NOTE)
                   for grade in grades] or ["No files were handed in."]
        return {"gradable": False, "format_errors": reasons, "message": "Nothing could be graded.",
                "output": _summary(grades)}
    tests = [{"name": f"{file_name(grade.assignment)} / {task.task.grade_id}", "points": task.points,
              "max_points": task.task.points, "message": task.status,
              "output": _plain(task_feedback(task))}
             for grade in grades for task in grade.tasks]
    total = sum(grade.max_points for grade in grades)
    results = {"gradable": True, "score": sum(grade.points for grade in grades) / total if total else 0.0,
               "message": f"{number(sum(grade.points for grade in grades))} of {number(total)} points.",
               "output": _summary(grades), "tests": tests}
    return _within_limit(results)


def _within_limit(results: dict) -> dict:
    """Shorten the tests' outputs, longest first, until the file fits the platforms' limit."""
    while len(json.dumps(results)) > MAX_RESULTS_BYTES:
        longest = max(results["tests"], key=lambda test: len(test.get("output", "")), default=None)
        if longest is None or len(longest["output"]) < 200:
            results["output"] = results["output"][:2000]
            results["tests"] = results["tests"][:200]
            break
        longest["output"] = longest["output"][: len(longest["output"]) // 2] + "\n… (cut)"
    return results


def _write(results: dict, path: Path) -> None:
    """Write the results file by renaming a new file over it: whatever stood at that path is replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".results-")
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        json.dump(results, file, indent=1)
    os.replace(temporary, path)


def _failure(platform: str, why: str) -> dict:
    if platform == "gradescope":
        return {"score": 0, "output": f"{GRADER_FAILED}\n{why}", "visibility": "visible", "tests": []}
    return {"gradable": False, "format_errors": [GRADER_FAILED], "message": GRADER_FAILED, "output": why}


def grade_submission(platform: str, root: Path, assignments: list[str], hidden_visibility: str,
                     grader_options: list[str]) -> int:
    """Grade ``root``'s submitted folder as one learner and write the platform's results file."""
    submission = root / ("submission" if platform == "gradescope" else "student")
    results_path = root / "results" / "results.json"
    try:
        handed_in = stat.S_ISDIR(os.lstat(submission).st_mode)
    except OSError:
        handed_in = False
    try:
        with tempfile.TemporaryDirectory(prefix="course-grade-") as work:
            folder = submission if handed_in else Path(work, "nothing")  # nothing: each assignment's rows
            Path(work, "nothing").mkdir()
            args = parse_args([str(folder), "--out", str(Path(work, "out")), "--one-learner", LEARNER,
                               *grader_options, *(f"--assignment={name}" for name in assignments)])
            grades = grade_folder(args)
    except (Exception, SystemExit) as error:  # the grader failed: the platform still gets a valid file
        traceback.print_exc()
        _write(_failure(platform, safe_text(f"{type(error).__name__}: {error}", MAX_NOTE)), results_path)
        return 1
    if platform == "gradescope":
        _write(gradescope_results(grades, hidden_visibility), results_path)
    else:
        _write(prairielearn_results(grades), results_path)
    return 0


def _packaged_files(root: Path, assignments: list[str]):
    for name in PACKAGED:
        path = root / name
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            relative = file.relative_to(root).as_posix()
            if file.is_file() and not file.is_symlink() and not any(part in relative for part in SKIPPED):
                yield file, relative
    for name in assignments:
        yield root / "solutions" / f"{name}.ipynb", f"solutions/{name}.ipynb"


def package(assignments: list[str], out: Path, root: Path = COURSE_ROOT) -> Path:
    """Gradescope's autograder zip for these assignments: setup.sh and run_autograder at the root."""
    run = RUN_AUTOGRADER.format(assignments=" ".join(f"--assignment {name}" for name in assignments))
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for text, name in ((SETUP_SH, "setup.sh"), (run, "run_autograder")):
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | 0o755) << 16
            archive.writestr(info, text)
        for file, name in _packaged_files(root, assignments):
            archive.write(file, name)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grade.platforms", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("platform", choices=("gradescope", "prairielearn", "package"))
    parser.add_argument("--root", type=Path, default=None,
                        help="the platform's folder (default: /autograder for Gradescope, /grade for "
                             "PrairieLearn)")
    parser.add_argument("--assignment", action="append", default=[], metavar="NAME",
                        help="an assignment this autograder grades, handed in or not (repeatable)")
    parser.add_argument("--hidden-visibility", choices=VISIBILITIES, default="after_published",
                        help="when Gradescope shows the points of tasks with hidden tests")
    parser.add_argument("--out", type=Path, default=Path("dist/autograder.zip"), help="package: the zip")
    args, grader_options = parser.parse_known_args(argv)
    unknown = [name for name in args.assignment if len(name.encode()) > MAX_NAME_BYTES
               or not (DEFAULT_SOURCES / f"{name}.ipynb").is_file()]
    if unknown or (args.platform == "package" and not args.assignment):
        parser.error(f"name one or more assignments of {DEFAULT_SOURCES} with --assignment "
                     f"(unknown: {', '.join(unknown) or 'none given'})")
    if args.platform == "package":
        print(f"Wrote {package(args.assignment, args.out)}")
        return 0
    root = args.root or Path("/autograder" if args.platform == "gradescope" else "/grade")
    return grade_submission(args.platform, root, args.assignment, args.hidden_visibility, grader_options)


if __name__ == "__main__":
    sys.exit(main())
