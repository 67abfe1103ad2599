"""Trusted verdicts: results that passed the schema (:mod:`.protocol`), judged against the grader's own Tasks.

:func:`course.tasks.common.judge` rebuilds each case's inputs and reference itself. A verdict's message is
shown for visible tests only: of a hidden test the learner learns one bit, passed or failed
(:func:`.grading.grade_tasks`), since the learner's code chooses how it fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.tasks.common import judge

from .recording import Step

PASSED, FAILED, ERROR, TIMEOUT, MISSING = "passed", "failed", "error", "timeout", "missing"
STATUSES = (PASSED, FAILED, ERROR, TIMEOUT, MISSING)


@dataclass(frozen=True)
class Verdict:
    status: str
    message: str  # for the learner, when the call is a visible one
    grader_problem: bool = False  # the machine, not the learner's code, kept the check from running


def judge_results(step: Step, results: list[dict]) -> Verdict | None:
    """The verdict on the first failing case of one Task, or None when every case passes."""
    for case, result in zip(step.task.cases, results, strict=True):
        try:
            judged = judge(step.task, case, result)
        except Exception as error:  # noqa: BLE001 (data odd enough to upset the comparison)
            return Verdict(FAILED, f"{step.task.name}: the results cannot be compared with the reference "
                                   f"({type(error).__name__}).")
        message = judged or result.get("extra")
        if message:
            return Verdict(FAILED, message)
    return None


def kernel_refused(step: Step, error: dict) -> Verdict:
    """The learner's kernel could not be taken out of the notebook (it uses a list, say)."""
    return Verdict(FAILED, f"{step.task.name}: {error['type']}: {error['message']}")


def missing_names(names: list[str]) -> Verdict:
    listed = ", ".join(f"`{name}`" for name in names)
    return Verdict(ERROR, f"the notebook defines no {listed}: was it renamed or its cell deleted?")


def check_refused(function: str, failure: str | None) -> Verdict:
    message = failure or "the check stopped before all its tests ran"
    return Verdict(FAILED, f"{function}: {message}")


def passed(steps: tuple[Step, ...]) -> Verdict:
    names = ", ".join(step.task.name for step in steps)
    cases = sum(len(step.task.cases) for step in steps)
    return Verdict(PASSED, f"✓ {names}: {cases} cases passed.")
