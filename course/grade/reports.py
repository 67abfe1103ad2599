"""What grading writes: ``grades.csv``, one Markdown feedback file per learner and notebook, and a summary.

The CSV holds nothing that changes from run to run (no times), so grading twice gives the same file.
Feedback shows the full message of visible tests; of hidden tests only whether they passed and the kind of
failure, never their inputs.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from .grading import SubmissionGrade, TaskGrade
from .judging import PASSED, STATUSES

CSV_COLUMNS = ("learner", "assignment", "task", "points", "max_points", "status", "reason")
SLOWEST_SHOWN = 3


def number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _ordered(grades: list[SubmissionGrade]) -> list[SubmissionGrade]:
    return sorted(grades, key=lambda grade: (grade.learner, grade.assignment))


def write_csv(grades: list[SubmissionGrade], path: Path) -> None:
    """One row per learner and task; a notebook that matches no assignment gets one row with task ``-``."""
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(CSV_COLUMNS)
        for grade in _ordered(grades):
            if not grade.tasks:
                writer.writerow([grade.learner, grade.assignment, "-", 0, 0, grade.problem_status,
                                 grade.problem])
            for task in grade.tasks:
                writer.writerow([grade.learner, grade.assignment, task.task.grade_id, number(task.points),
                                 number(task.task.points), task.status, task.reason])


def _task_section(grade: TaskGrade) -> list[str]:
    plural = "s" if grade.task.points != 1 else ""
    points = f"{number(grade.points)} of {number(grade.task.points)} point{plural}"
    lines = [f"## {grade.task.grade_id}: {points}, {grade.status}", ""]
    if not grade.calls:
        return lines + [grade.reason, ""]
    visible = [outcome for outcome in grade.calls if not outcome.call.hidden]
    for outcome in visible:
        verdict = outcome.verdict
        if verdict.status == PASSED:
            lines.append(f"Visible tests: {verdict.message}")
        else:
            lines += [f"Visible tests: {verdict.status}.", "", "```text", verdict.message, "```"]
    hidden = [outcome for outcome in grade.calls if outcome.call.hidden]
    hidden_planned = any(call.hidden for call in grade.task.calls)
    if hidden_planned and not hidden:
        lines.append("Hidden tests: not run, because the visible tests did not pass.")
    for outcome in hidden:
        verdict = outcome.verdict
        lines.append("Hidden tests (other random inputs): passed." if verdict.status == PASSED else
                     f"Hidden tests (other random inputs): {verdict.status}, {verdict.kind}. Their inputs "
                     f"stay hidden: try your code on other sizes and seeds.")
    return lines + [""]


def feedback_text(grade: SubmissionGrade) -> str:
    lines = [f"# {grade.assignment}: feedback for {grade.learner}", "",
             f"Score: {number(grade.points)} of {number(grade.max_points)} points.", ""]
    if grade.problem:
        lines += [f"This notebook could not be graded: {grade.problem}.", ""]
    if grade.notes:
        lines += ["Notes from the grader:", ""] + [f"- {note}" for note in grade.notes] + [""]
    for task in grade.tasks:
        lines += _task_section(task)
    return "\n".join(lines)


def write_feedback(grades: list[SubmissionGrade], folder: Path) -> None:
    """``folder/<learner>/<assignment>.md`` for every graded notebook."""
    for grade in grades:
        path = folder / grade.learner / f"{grade.assignment}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(feedback_text(grade))


def summary(grades: list[SubmissionGrade], seconds: float, jobs: int, isolation: list[str]) -> str:
    """Counts per status and per task, the slowest submissions, and what the sandbox guaranteed."""
    learners = {grade.learner for grade in grades}
    handed_in = [grade for grade in grades if grade.path]
    rows = [(grade, task) for grade in _ordered(grades) for task in grade.tasks]
    lines = [f"Graded {_count(len(handed_in), 'notebook')} of {_count(len(learners), 'learner')} in "
             f"{seconds:.1f} s ({jobs} at a time).", *isolation]
    ungated = [grade for grade in handed_in if grade.ungated]
    if ungated:
        lines.append(f"WARNING: the kernels of {_count(len(ungated), 'notebook')} ran without Numba's "
                     f"compile check, so such a kernel could tamper with the gpusim that runs it "
                     f"({ungated[0].ungated})")
    lines.append("Statuses: " + ", ".join(f"{status} {sum(t.status == status for _, t in rows)}"
                                          for status in STATUSES))
    per_task: dict[str, Counter] = {}
    for grade, task in rows:
        per_task.setdefault(f"{grade.assignment}/{task.task.grade_id}", Counter())[task.status] += 1
    width = max((len(name) for name in per_task), default=0)
    lines.append("Per task:")
    lines += [f"  {name:<{width}}  " + "  ".join(f"{status} {counts[status]}" for status in STATUSES
                                                 if counts[status])
              for name, counts in per_task.items()]
    slowest = sorted(handed_in, key=lambda grade: -grade.seconds)
    lines.append("Slowest submissions:")
    lines += [f"  {grade.seconds:5.1f} s  {grade.learner}/{grade.path.name}"
              for grade in slowest[:SLOWEST_SHOWN]]
    return "\n".join(lines)
