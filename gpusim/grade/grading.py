"""Grading: one submission through its worker, and a whole folder in parallel.

For each graded task the visible check call runs first, then the hidden ones (only if the visible one
passed); each call has its own deadline. A call that times out or kills the worker costs that task: the next
task gets a fresh worker, which runs the learner's cells again. Points are all or nothing per task, as in
nbgrader.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from .assignments import Assignment, CheckCall, GradedTask
from .discovery import Submission
from .judging import ERROR, MISSING, PASSED, TIMEOUT, Verdict, judge_call
from .restore import Prepared, Unreadable, match_assignment, prepare, read_notebook
from .sandbox import Limits, Worker, WorkerDied, WorkerTimeout

CALIBRATION_LIMITS_S = (120.0, 60.0)  # (setup, call) while the reference solution is timed
SLOWDOWN, MARGIN_S = 2.0, 3.0  # a call may take SLOWDOWN times the reference's time plus MARGIN_S
SETUP_MARGIN_S = 15.0


@dataclass(frozen=True)
class CallOutcome:
    call: CheckCall
    verdict: Verdict
    seconds: float


@dataclass(frozen=True)
class TaskGrade:
    task: GradedTask
    status: str
    points: float
    calls: tuple[CallOutcome, ...]  # the calls that ran, visible first
    reason: str  # short, for the CSV


@dataclass
class SubmissionGrade:
    learner: str
    assignment: str
    path: Path | None
    max_points: float
    tasks: list[TaskGrade] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # restored cells, cell errors, the sandbox's limits
    problem: str = ""  # why the notebook as a whole could not be graded
    seconds: float = 0.0
    setup_seconds: float = 0.0  # starting the worker and running the learner's cells, once

    @property
    def points(self) -> float:
        return sum(grade.points for grade in self.tasks)


def _short(text: str, limit: int = 120) -> str:
    """The first line of a message, without its closing colon, cut to ``limit`` characters."""
    line = text.strip().splitlines()[0].rstrip(":") if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class Session:
    """The worker of one submission, started when first needed and again after a timeout or a crash."""

    def __init__(self, assignment: Assignment, prepared: Prepared, limits: Limits, hidden: tuple[Path, ...]):
        self.assignment, self.prepared, self.limits, self.hidden = assignment, prepared, limits, hidden
        self.worker: Worker | None = None
        self.notes: list[str] = []
        self.setup_seconds = 0.0
        self.broken: Verdict | None = None  # set when the learner's cells themselves time out or crash

    def run(self, call: CheckCall) -> CallOutcome:
        """One check call's verdict and its seconds (not counting the start of a worker)."""
        if self.worker is None and self.broken is None:
            self._start()
        start = time.monotonic()
        verdict = self.broken or self._request(call)
        return CallOutcome(call, verdict, time.monotonic() - start)

    def _start(self) -> None:
        start = time.monotonic()
        try:
            self.worker = Worker(self.assignment.module, self.prepared.cells, self.limits, self.hidden)
        except WorkerTimeout:
            self.broken = Verdict(TIMEOUT, f"running the notebook's cells took more than "
                                           f"{self.limits.setup_s:.0f} s, before any check could run.",
                                  "time limit")
            return
        except (WorkerDied, OSError) as death:
            self.broken = Verdict(ERROR, f"the notebook's process ended while running its cells ({death}).",
                                  "process died")
            return
        self.setup_seconds = time.monotonic() - start
        if not self.notes:
            self.notes = [f"Sandbox: {', '.join(self.worker.confinement)}."] + self.worker.cell_errors

    def _request(self, call: CheckCall) -> Verdict:
        request = {"function": call.function, "names": list(call.names), "keywords": call.keywords}
        try:
            return judge_call(call, self.worker.request(request, self.limits.call_s))
        except WorkerTimeout:
            self.worker = None
            message = (f"stopped after {self.limits.call_s:.1f} s, far longer than the reference solution "
                       f"needs: a loop that never ends, or a kernel that waits forever?")
            return Verdict(TIMEOUT, message, "time limit")
        except WorkerDied as death:
            self.close()
            return Verdict(ERROR, f"the notebook's process died during the check ({death}). Memory limit: "
                                  f"{self.limits.memory_bytes // 2**20} MiB.", "process died")

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None


def _grade_task(task: GradedTask, session: Session, present: frozenset[str]) -> TaskGrade:
    if task.problem:
        return TaskGrade(task, ERROR, 0, (), task.problem)
    if task.solution_ids and not present & set(task.solution_ids):
        cells = ", ".join(f"`{grade_id}`" for grade_id in task.solution_ids)
        return TaskGrade(task, MISSING, 0, (), f"the notebook has no solution cell {cells}")
    outcomes = []
    for call in task.calls:
        outcomes.append(session.run(call))
        if outcomes[-1].verdict.status != PASSED:
            break
    failed = next((o for o in outcomes if o.verdict.status != PASSED), None)
    if failed is None:
        return TaskGrade(task, PASSED, task.points, tuple(outcomes), "")
    verdict = failed.verdict
    if verdict.status == TIMEOUT:
        reason = "ran past the time limit: a loop that never ends?"
    elif failed.call.hidden:
        reason = f"hidden tests: {verdict.kind}"
    else:
        reason = _short(verdict.message)
    return TaskGrade(task, verdict.status, 0, tuple(outcomes), reason)


def _whole_notebook(grade: SubmissionGrade, assignment: Assignment, status: str,
                    reason: str) -> SubmissionGrade:
    grade.problem = reason
    grade.tasks = [TaskGrade(task, status, 0, (), reason) for task in assignment.tasks]
    return grade


def grade_submission(submission: Submission, assignments: dict[str, Assignment],
                     limits: dict[str, Limits], hidden: tuple[Path, ...]) -> SubmissionGrade:
    """Grade one notebook; every problem becomes a status on its tasks, never an exception."""
    start = time.monotonic()
    named = assignments.get(submission.path.stem)
    grade = SubmissionGrade(submission.learner, submission.path.stem, submission.path,
                            named.max_points if named else 0)
    try:
        cells = read_notebook(submission.path)
        assignment = match_assignment(submission.path, cells, assignments)
    except Unreadable as problem:
        if named is None:
            grade.problem = str(problem)
            return grade
        return _whole_notebook(grade, named, ERROR, str(problem))
    grade.assignment, grade.max_points = assignment.name, assignment.max_points
    try:
        prepared = prepare(assignment, cells)
    except Exception as error:  # noqa: BLE001 (one odd notebook must not stop the class)
        return _whole_notebook(grade, assignment, ERROR, f"the grader cannot read its cells ({error})")
    session = Session(assignment, prepared, limits[assignment.name], hidden)
    try:
        grade.tasks = [_grade_task(task, session, prepared.present) for task in assignment.tasks]
    finally:
        session.close()
    grade.notes = list(prepared.notes) + session.notes
    grade.setup_seconds = session.setup_seconds
    grade.seconds = time.monotonic() - start
    return grade


def missing_notebook(learner: str, assignment: Assignment) -> SubmissionGrade:
    """The grade of a learner who handed in no notebook for an assignment others handed in."""
    grade = SubmissionGrade(learner, assignment.name, None, assignment.max_points)
    return _whole_notebook(grade, assignment, MISSING, "no notebook handed in for this assignment")


def calibrated_limits(reference: SubmissionGrade, memory_bytes: int) -> Limits:
    """Deadlines from the reference solution's own times: SLOWDOWN times as long, plus a margin."""
    slowest = max((o.seconds for grade in reference.tasks for o in grade.calls), default=0.0)
    return Limits(SLOWDOWN * reference.setup_seconds + SETUP_MARGIN_S, SLOWDOWN * slowest + MARGIN_S,
                  memory_bytes)


def grade_all(submissions: list[Submission], assignments: dict[str, Assignment], limits: dict[str, Limits],
              hidden: tuple[Path, ...], jobs: int,
              progress: Callable[[int, int, SubmissionGrade], None]) -> list[SubmissionGrade]:
    """Grade the submissions on ``jobs`` workers at a time; ``progress(done, total, grade)`` after each."""
    grades = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(grade_submission, s, assignments, limits, hidden) for s in submissions]
        for done, future in enumerate(as_completed(futures), start=1):
            grades.append(future.result())
            progress(done, len(futures), grades[-1])
    return grades


def reference_grades(sources: Path, assignments: dict[str, Assignment], memory_bytes: int, jobs: int,
                     hidden: tuple[Path, ...]) -> dict[str, SubmissionGrade]:
    """Each source notebook graded as if handed in, under generous limits: its times set the deadlines."""
    setup_s, call_s = CALIBRATION_LIMITS_S
    generous = {name: Limits(setup_s, call_s, memory_bytes) for name in assignments}
    references = [Submission("reference", sources / f"{name}.ipynb") for name in assignments]
    grades = grade_all(references, assignments, generous, hidden, jobs, lambda *_: None)
    return {grade.assignment: grade for grade in grades}
