"""What grading writes: ``grades.csv``, one Markdown feedback file per learner and notebook, and a summary.

The CSV holds nothing that changes from run to run (no times), so grading twice gives the same file.
Feedback shows the full message of visible tests; of hidden tests only whether all of a task's passed: one
bit per task, the same words for a wrong value, an error and a timeout, never their inputs. Every name and
message from a submission goes through :mod:`.text` on its way out: learners and notebooks are named by
:func:`~.text.file_name` (in the CSV, the feedback's paths and the summary alike), messages by
:func:`~.text.safe_text`.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from .grading import SubmissionGrade, TaskGrade
from .judging import PASSED, STATUSES
from .text import csv_cell, file_name, safe_text

CSV_COLUMNS = ("learner", "assignment", "task", "points", "max_points", "status", "reason")
SLOWEST_SHOWN = 3
MAX_REASON = 200  # characters of a reason in the CSV
MAX_MESSAGE = 4000  # characters of one message or note in the feedback
HIDDEN_PASSED = "Hidden tests (other random inputs): passed."
HIDDEN_FAILED = ("Hidden tests (other random inputs): failed. Of hidden tests you learn only whether all of "
                 "a task's passed, never how one failed (a wrong value, an error and a time limit read "
                 "alike) nor its inputs: try your code on other sizes and seeds.")


def number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _ordered(grades: list[SubmissionGrade]) -> list[SubmissionGrade]:
    return sorted(grades, key=lambda grade: (grade.learner, grade.assignment))


def write_csv(grades: list[SubmissionGrade], path: Path) -> None:
    """One row per learner and task; a notebook that matches no assignment gets one row with task ``-``.
    Rows are ordered by their learner and assignment cells as written (a notebook's tasks in their order), so
    that shards graded apart merge into the same file (:mod:`.shards`)."""
    rows = []
    for grade in _ordered(grades):
        learner, assignment = csv_cell(file_name(grade.learner)), csv_cell(file_name(grade.assignment))
        if not grade.tasks:
            rows.append([learner, assignment, "-", 0, 0, grade.problem_status,
                         csv_cell(safe_text(grade.problem, MAX_REASON))])
        rows += [[learner, assignment, task.task.grade_id, number(task.points), number(task.task.points),
                  task.status, csv_cell(safe_text(task.reason, MAX_REASON))] for task in grade.tasks]
    rows.sort(key=lambda row: (row[0], row[1]))
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(CSV_COLUMNS)
        writer.writerows(rows)


def _code_block(message: str) -> list[str]:
    """A message in a fenced block that nothing in it can close (a fence longer than its longest run of
    backticks)."""
    text = safe_text(message, MAX_MESSAGE, lines=True)
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", text, fence]


def _task_section(grade: TaskGrade) -> list[str]:
    plural = "s" if grade.task.points != 1 else ""
    points = f"{number(grade.points)} of {number(grade.task.points)} point{plural}"
    return [f"## {grade.task.grade_id}: {points}, {grade.status}", "", *task_feedback(grade)]


def task_feedback(grade: TaskGrade) -> list[str]:
    """What a learner is told about one task: visible tests' messages, one bit for the hidden tests."""
    if not grade.calls:
        return [safe_text(grade.reason, MAX_MESSAGE), ""]
    return visible_feedback(grade) + hidden_feedback(grade) + [""]


def visible_feedback(grade: TaskGrade) -> list[str]:
    """The visible tests' messages of a task that ran."""
    lines = []
    for outcome in (outcome for outcome in grade.calls if not outcome.call.hidden):
        verdict = outcome.verdict
        if verdict.status == PASSED:
            lines.append(f"Visible tests: {safe_text(verdict.message, MAX_MESSAGE)}")
        else:
            lines += [f"Visible tests: {verdict.status}.", "", *_code_block(verdict.message)]
    return lines


def hidden_feedback(grade: TaskGrade) -> list[str]:
    """One line on a task's hidden tests, if it has any: whether all of them passed, never how or on what."""
    hidden = [outcome for outcome in grade.calls if outcome.call.hidden]
    if any(call.hidden for call in grade.task.calls) and not hidden:
        return ["Hidden tests: not run, because the visible tests did not pass."]
    if hidden:
        return [HIDDEN_PASSED if all(o.verdict.status == PASSED for o in hidden) else HIDDEN_FAILED]
    return []


def feedback_text(grade: SubmissionGrade) -> str:
    lines = [f"# {file_name(grade.assignment)}: feedback for {file_name(grade.learner)}", "",
             f"Score: {number(grade.points)} of {number(grade.max_points)} points.", ""]
    if grade.problem:
        lines += [f"This notebook could not be graded: {safe_text(grade.problem, MAX_MESSAGE)}.", ""]
    if grade.notes:
        lines += ["Notes from the grader:", ""]
        lines += [f"- {safe_text(note, MAX_MESSAGE)}" for note in grade.notes] + [""]
    for task in grade.tasks:
        lines += _task_section(task)
    return "\n".join(lines)


def feedback_path(folder: Path, grade: SubmissionGrade) -> Path:
    """Where a grade's feedback goes: a folder per learner, a file per notebook, both named by file_name."""
    return folder / file_name(grade.learner) / f"{file_name(grade.assignment)}.md"


def write_feedback(grades: list[SubmissionGrade], folder: Path) -> None:
    """``folder/<learner>/<assignment>.md`` for every graded notebook."""
    for grade in grades:
        path = feedback_path(folder, grade)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(feedback_text(grade), encoding="utf-8")


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
    lines += [f"  {grade.seconds:5.1f} s  {file_name(grade.learner)}/{safe_text(grade.path.name, MAX_REASON)}"
              for grade in slowest[:SLOWEST_SHOWN]]
    return "\n".join(lines)
