"""Grading: one submission through its two workers, and a whole folder in parallel.

Each submission gets a learner worker (W1, :mod:`.worker`), which runs its cells, and a kernel runner (W2,
:mod:`.runner`), which runs its kernels; both sandboxed (:mod:`.sandbox`), each restarted when it dies or
misses a deadline. Both run in the submission's own cgroup, where the run has them (:mod:`.cgroups`), and
their deadlines count its CPU time (:mod:`.deadlines`); a check that could not finish because the machine was
too busy is run again, and reported as a grader problem, never as the learner's timeout, if that persists.
Visible check calls run first, for every task; hidden ones follow, for the tasks whose visible calls passed,
so that nothing W1 learns of a hidden test can reach a visible message. A cell that ends W1 while the
notebook's cells run (``os._exit``, a segfault, a loop that never ends) is left out and W1 started again
without it: it costs only the tasks that need what it defines. Points are all or nothing per task, as in
nbgrader.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from . import protocol
from .assignments import Assignment, CheckCall, GradedTask
from .cgroups import Domain
from .channel import Channel, MachineBusy, WorkerDied, WorkerTimeout
from .deadlines import Deadline
from .discovery import Refusal, Submission
from .judging import (
    ERROR,
    FAILED,
    MISSING,
    PASSED,
    TIMEOUT,
    Verdict,
    check_refused,
    judge_results,
    kernel_refused,
    missing_names,
    passed,
)
from .limits import Limits
from .recording import FUNCTION
from .restore import Prepared, Unreadable, match_assignment, parse_notebook, prepare, read_regular_file
from .sandbox import Sandbox
from .serving import Serving

CALIBRATION_LIMITS_S = (120.0, 60.0)  # (setup, call) while the reference solution is timed
SLOWDOWN, MARGIN_S = 2.0, 3.0  # a request may take SLOWDOWN times the reference's longest plus MARGIN_S
SETUP_MARGIN_S = 15.0
MAX_SKIPPED_CELLS = 3
BUSY_RETRIES, BUSY_PAUSE_S = 2, 5.0  # a check stopped by a busy machine runs again, after a pause
HIDDEN_REASON = "hidden tests failed"  # the CSV's reason, however they failed
# COURSE_GRADING: no helper process or thread started ahead of the checks (course.tasks.in_own_notebook)
LEARNER_ENV = {"COURSE_MODE": "cpu", "NUMBA_ENABLE_CUDASIM": "1", "COURSE_GRADING": "1"}
RUNNER_ENV = {"NUMBA_ENABLE_CUDASIM": "0"}


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
    notes: list[str] = field(default_factory=list)  # other notebooks, restored and skipped cells, cell errors
    problem: str = ""  # why the notebook as a whole could not be graded
    problem_status: str = ERROR  # the status of the one row of a notebook that matches no assignment
    seconds: float = 0.0
    setup_seconds: float = 0.0  # starting both workers and running the learner's cells, once
    slowest_request_s: float = 0.0  # the longest answer of either worker to one request
    ungated: str = ""  # why its kernels ran without Numba's compile check (empty when they had it)
    kernels: list[dict] = field(default_factory=list)  # passed tasks' kernels, as specs (keep_kernels only)

    @property
    def points(self) -> float:
        return sum(grade.points for grade in self.tasks)


def _short(text: str, limit: int = 120) -> str:
    """The first line of a message, without its closing colon, cut to ``limit`` characters."""
    line = text.strip().splitlines()[0].rstrip(":") if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class CellFailure(Exception):
    """W1 died or ran out of time while running the notebook's cells; ``cell`` is the one it was in."""

    def __init__(self, cell: int | None, how: str, timed_out: bool = False):
        super().__init__(how)
        self.cell, self.how, self.timed_out = cell, how, timed_out


class Session:
    """The two workers of one submission, started when first needed and again after a timeout or a crash."""

    def __init__(self, assignment: Assignment, prepared: Prepared, limits: Limits, sandbox: Sandbox,
                 notebook: tuple[str, bytes], domain: Domain | None = None):
        self.assignment, self.prepared, self.limits = assignment, prepared, limits
        self.sandbox, self.notebook, self.domain = sandbox, notebook, domain
        self.learner: Channel | None = None
        self.runner: Channel | None = None
        self.skipped: dict[int, str] = {}
        self.notes: list[str] = []
        self.started_once = False
        self.hidden_phase = False  # set once hidden calls run: from then on W1 may know hidden inputs
        self.broken: Verdict | None = None  # set when the learner's cells cannot be run at all
        self.setup_seconds = self.slowest_request_s = 0.0
        self.ungated = ""  # why Numba's CUDA compiler could not gate this notebook's kernels, if it could not
        self.keep_kernels = False  # keep the specs of kernels that passed a visible call (grader's launch)
        self.kept: list[tuple[str, dict]] = []  # (grade_id, what course.grade.gpu needs to time the kernel)
        self.grade_id = ""  # the task whose calls run now

    # ------------------------------------------------------------------------------------ one check call

    def run(self, call: CheckCall) -> CallOutcome:
        """One check call's verdict and its seconds; again, after a pause, when the machine was too busy."""
        start = time.monotonic()
        for attempt in range(BUSY_RETRIES + 1):
            try:
                return CallOutcome(call, self._verdict(call), time.monotonic() - start)
            except MachineBusy as busy:
                why = str(busy)
                if attempt < BUSY_RETRIES:
                    time.sleep(BUSY_PAUSE_S * (attempt + 1))
        verdict = Verdict(ERROR, f"grader problem, not yours: the machine was too busy to run this check "
                                 f"({BUSY_RETRIES + 1} tries; the last time, {why}). Ask for your notebook "
                                 f"to be graded again.", grader_problem=True)
        return CallOutcome(call, verdict, time.monotonic() - start)

    def _verdict(self, call: CheckCall) -> Verdict:
        serving = Serving(call)
        answer = self._ask_learner(call, serving)
        if isinstance(answer, Verdict):
            return answer
        if answer["type"] == "missing":
            return missing_names(answer["names"])
        for index, (planned, got) in enumerate(zip(call.steps, answer["steps"], strict=False)):
            if got["kind"] == FUNCTION:
                verdict = judge_results(planned, serving.with_reads(index, got["results"]))
            elif got["error"] is not None:
                verdict = kernel_refused(planned, got["error"])
            else:
                results = self._run_kernel(call, index, got)
                if isinstance(results, Verdict):
                    return results
                verdict = judge_results(planned, results)
                if verdict is None and self.keep_kernels and not call.hidden and got["plans"] is None:
                    self.kept.append((self.grade_id, {
                        "task": planned.task.name, "function": call.function, "arg_count": len(call.names),
                        "keywords": call.keywords, "step": index, "kernel": got["kernel"]}))
            if verdict is not None:
                return verdict
        if len(answer["steps"]) < len(call.steps):
            return check_refused(call.function, answer["failure"])
        return passed(call.steps)

    def _ask_learner(self, call: CheckCall, serving: Serving) -> dict | Verdict:
        """W1's checked answer to one call (its reads of chunked inputs served on the way), or the verdict
        when there is none."""
        if self.learner is None and self.broken is None:
            self._start_learner()
        if self.broken is not None:
            return self.broken
        message = {"type": "call", "function": call.function, "names": list(call.names),
                   "keywords": call.keywords, "inputs": serving.inputs()}
        try:
            return self._exchange(self.learner, message, protocol.answer_cap(call),
                                  lambda reply: protocol.answer_or_read(reply, call, serving), serving)
        except WorkerTimeout as timeout:
            self.learner = None
            return Verdict(TIMEOUT, f"stopped {timeout}, far longer than the reference solution needs: a "
                                    f"loop that never ends, or a wait that never returns?")
        except WorkerDied as death:
            self.learner = None
            return Verdict(ERROR, f"the notebook's process ended during the check ({death}).")
        except MachineBusy:
            self.learner = None
            raise

    def _run_kernel(self, call: CheckCall, index: int, got: dict) -> list[dict] | Verdict:
        """W2's checked results for one kernel Task, or the verdict when there are none."""
        step = call.steps[index]
        request = protocol.RunRequest(call.function, len(call.names), call.keywords, index, got["kernel"],
                                      got["plans"])
        try:
            if self.runner is None:
                self.runner = self._start_runner()
        except (WorkerTimeout, WorkerDied, OSError) as problem:
            return Verdict(ERROR, f"{step.task.name}: the process that runs kernels under gpusim could not "
                                  f"start ({problem or 'it ran out of time'}).")
        try:
            return self._exchange(self.runner, request.message(), protocol.results_cap(step),
                                  lambda reply: protocol.results(reply, step))
        except WorkerTimeout as timeout:
            self.runner = None
            return Verdict(TIMEOUT, f"{step.task.name}: stopped {timeout}, far longer than the reference "
                                    f"solution needs: a loop in the kernel that never ends, or a thread that "
                                    f"waits forever?")
        except WorkerDied as death:
            self.runner = None
            return Verdict(ERROR, f"{step.task.name}: the process running the kernel under gpusim ended "
                                  f"({death}).")
        except MachineBusy:
            self.runner = None
            raise

    def _exchange(self, channel: Channel, message: dict, cap: int, check: Callable[[dict], dict],
                  serving: Serving | None = None) -> dict:
        """One request and its checked reply, within the call's limit (the reads that come first are
        served); the slowest is remembered."""
        deadline = Deadline(self.limits.call_s, self.domain)
        channel.send(message, deadline)
        while True:
            reply = channel.receive(deadline, cap, check)
            if serving is None or reply["type"] != "read":
                break
            channel.send(serving.serve(reply), deadline)
        self.slowest_request_s = max(self.slowest_request_s, deadline.spent_s())
        return reply

    # -------------------------------------------------------------------------------------- the workers

    def _start_runner(self) -> Channel:
        deadline = Deadline(self.limits.setup_s, self.domain)
        channel = Channel(self.sandbox.launch([sys.executable, "-P", "-m", "course.grade.runner"], RUNNER_ENV,
                                              None, self.domain))
        channel.send({"type": "start", "module": self.assignment.module,
                      "resources": self.limits.resources()}, deadline)
        compiler = channel.receive(deadline, protocol.SETUP_CAP, protocol.ready)
        if not compiler["available"]:
            self.ungated = compiler["reason"]
        self.setup_seconds = max(self.setup_seconds, deadline.spent_s())
        return channel

    def _start_learner(self) -> None:
        """Start W1 and run the cells, leaving out each cell that ends the process (a few at most)."""
        while self.learner is None:
            try:
                self.learner = self._learner_attempt()
            except CellFailure as failure:
                if failure.cell is None or len(self.skipped) >= MAX_SKIPPED_CELLS:
                    self.broken = self._cells_broken(failure)
                    return
                label = self.prepared.cells[failure.cell][0]
                self.skipped[failure.cell] = label
                if not self.hidden_phase:  # a note written after hidden calls could carry their inputs
                    self.notes.append(f"{label.capitalize()} ended the notebook's process ({failure.how}); "
                                      f"the grader ran the notebook again without it. Checks that need what "
                                      f"it defines fail.")

    def _cells_broken(self, failure: CellFailure) -> Verdict:
        if failure.timed_out:
            return Verdict(TIMEOUT, f"running the notebook's cells {failure.how}, before any check could "
                                    f"run.")
        return Verdict(ERROR, f"the notebook's process ended while running its cells ({failure.how}).")

    def _learner_attempt(self) -> Channel:
        deadline = Deadline(self.limits.setup_s, self.domain)
        cells = [[index, label, source] for index, (label, source) in enumerate(self.prepared.cells)
                 if index not in self.skipped]
        sent = {cell[0] for cell in cells}
        try:
            channel = Channel(self.sandbox.launch([sys.executable, "-P", "-m", "course.grade.worker"],
                                                  LEARNER_ENV, self.notebook, self.domain))
        except OSError as error:
            raise CellFailure(None, f"it could not start: {error}") from None
        current = None
        try:
            channel.send({"type": "start", "module": self.assignment.module, "cells": cells,
                          "resources": self.limits.resources()}, deadline)
            while True:
                message = channel.receive(deadline, protocol.SETUP_CAP,
                                          lambda m: protocol.setup_message(m, sent))
                if message["type"] != "running":
                    break
                current = message["cell"]
        except WorkerTimeout as timeout:
            raise CellFailure(current, f"stopped {timeout}", timed_out=True) from None
        except WorkerDied as death:
            raise CellFailure(current, str(death)) from None
        if not self.started_once and not self.hidden_phase:
            self.notes += message["cell_errors"]
            self.started_once = True
            self.setup_seconds = max(self.setup_seconds, deadline.spent_s())
        return channel

    def close(self) -> None:
        for channel in (self.learner, self.runner):
            if channel is not None:
                channel.close()
        self.learner = self.runner = None


# ------------------------------------------------------------------------------------------ tasks

def _task_grade(task: GradedTask, outcomes: list[CallOutcome]) -> TaskGrade:
    """All or nothing. A failed hidden call reads ``failed``, with the same reason whatever happened (a wrong
    value, an error, a crash, a timeout): the learner's code chooses how it fails, so anything more would
    carry bits of the hidden inputs out. One bit per task is all a hidden test reveals, unless the machine,
    not the learner, kept it from running."""
    failed = next((o for o in outcomes if o.verdict.status != PASSED), None)
    if failed is None:
        return TaskGrade(task, PASSED, task.points, tuple(outcomes), "")
    verdict = failed.verdict
    if failed.call.hidden and not verdict.grader_problem:
        return TaskGrade(task, FAILED, 0, tuple(outcomes), HIDDEN_REASON)
    if verdict.status == TIMEOUT:
        reason = "ran past the time limit: a loop that never ends?"
    else:
        reason = _short(verdict.message)
    return TaskGrade(task, verdict.status, 0, tuple(outcomes), reason)


def grade_tasks(assignment: Assignment, session: Session, present: frozenset[str]) -> list[TaskGrade]:
    """Every task's grade: the visible calls of all tasks first, then the hidden calls of the tasks that
    passed them."""
    early: dict[str, TaskGrade] = {}
    outcomes: dict[str, list[CallOutcome]] = {task.grade_id: [] for task in assignment.tasks}
    for task in assignment.tasks:
        if task.problem:
            early[task.grade_id] = TaskGrade(task, ERROR, 0, (), task.problem)
        elif task.solution_ids and not present & set(task.solution_ids):
            cells = ", ".join(f"`{grade_id}`" for grade_id in task.solution_ids)
            early[task.grade_id] = TaskGrade(task, MISSING, 0, (),
                                             f"the notebook has no solution cell {cells}")
    for hidden in (False, True):
        session.hidden_phase = hidden
        for task in assignment.tasks:
            done = outcomes[task.grade_id]
            if task.grade_id in early or any(o.verdict.status != PASSED for o in done):
                continue
            session.grade_id = task.grade_id
            for call in (call for call in task.calls if call.hidden == hidden):
                done.append(session.run(call))
                if done[-1].verdict.status != PASSED:
                    break
    return [early.get(task.grade_id) or _task_grade(task, outcomes[task.grade_id])
            for task in assignment.tasks]


def _whole_notebook(grade: SubmissionGrade, assignment: Assignment, status: str,
                    reason: str) -> SubmissionGrade:
    grade.problem = reason
    grade.tasks = [TaskGrade(task, status, 0, (), reason) for task in assignment.tasks]
    return grade


def grade_submission(submission: Submission, assignments: dict[str, Assignment], limits: dict[str, Limits],
                     sandbox: Sandbox, max_bytes: int, keep_kernels: bool = False) -> SubmissionGrade:
    """Grade one notebook; every problem becomes a status on its tasks, never an exception."""
    start = time.monotonic()
    named = assignments.get(submission.path.stem)
    grade = SubmissionGrade(submission.learner, submission.path.stem, submission.path,
                            named.max_points if named else 0, notes=list(submission.notes))
    try:
        data = read_regular_file(submission.path, max_bytes)
        cells = parse_notebook(data)
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
    try:
        domain = sandbox.domain()
    except OSError as error:
        return _whole_notebook(grade, assignment, ERROR,
                               f"grader problem: its cgroup could not be made ({error})")
    session = Session(assignment, prepared, limits[assignment.name], sandbox, (submission.path.name, data),
                      domain)
    session.keep_kernels = keep_kernels
    try:
        grade.tasks = grade_tasks(assignment, session, prepared.present)
    finally:
        session.close()
        sandbox.release(domain)
    passed = {task.task.grade_id for task in grade.tasks if task.status == PASSED}
    grade.kernels = [{"grade_id": grade_id, "module": assignment.module, **kept}
                     for grade_id, kept in session.kept if grade_id in passed]
    grade.notes += list(prepared.notes) + session.notes
    if session.ungated:
        grade.ungated = session.ungated
        grade.notes.append(f"Your kernels ran without Numba's compile check: {session.ungated}")
    grade.setup_seconds, grade.slowest_request_s = session.setup_seconds, session.slowest_request_s
    grade.seconds = time.monotonic() - start
    return grade


def refused(refusal: Refusal, assignments: dict[str, Assignment]) -> SubmissionGrade:
    """The grade of a learner and assignment with no notebook to grade: the rows say why."""
    assignment = assignments.get(refusal.assignment)
    if assignment is None:
        return SubmissionGrade(refusal.learner, refusal.assignment, None, 0, problem=refusal.reason,
                               problem_status=refusal.status)
    grade = SubmissionGrade(refusal.learner, assignment.name, None, assignment.max_points)
    return _whole_notebook(grade, assignment, refusal.status, refusal.reason)


def calibrated_limits(reference: SubmissionGrade, memory_bytes: int) -> Limits:
    """Deadlines from the reference solution's own times: SLOWDOWN times as long, plus a margin."""
    return Limits(SLOWDOWN * reference.setup_seconds + SETUP_MARGIN_S,
                  SLOWDOWN * reference.slowest_request_s + MARGIN_S, memory_bytes)


def grade_all(submissions: list[Submission], assignments: dict[str, Assignment], limits: dict[str, Limits],
              sandbox: Sandbox, max_bytes: int, jobs: int,
              progress: Callable[[int, int, SubmissionGrade], None],
              keep_kernels: bool = False) -> list[SubmissionGrade]:
    """Grade the submissions on ``jobs`` workers at a time; ``progress(done, total, grade)`` after each. When
    interrupted, the sandbox is stopped (every worker killed, none started) before the threads are awaited.
    ``keep_kernels``: each grade keeps the specs of its passed tasks' kernels (for course.grade.gpu)."""
    grades = []
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(grade_submission, s, assignments, limits, sandbox, max_bytes, keep_kernels)
                   for s in submissions]
        for done, future in enumerate(as_completed(futures), start=1):
            grades.append(future.result())
            progress(done, len(futures), grades[-1])
    except BaseException:
        sandbox.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return grades


def reference_grades(sources: Path, assignments: dict[str, Assignment], memory_bytes: int, jobs: int,
                     sandbox: Sandbox, max_bytes: int) -> dict[str, SubmissionGrade]:
    """Each source notebook graded as if handed in, under generous limits: its times set the deadlines."""
    setup_s, call_s = CALIBRATION_LIMITS_S
    generous = {name: Limits(setup_s, call_s, memory_bytes) for name in assignments}
    references = [Submission("reference", sources / f"{name}.ipynb") for name in assignments]
    grades = grade_all(references, assignments, generous, sandbox, max_bytes, jobs, lambda *_: None)
    return {grade.assignment: grade for grade in grades}
