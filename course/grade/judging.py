"""Trusted verdicts: results that passed the schema (:mod:`.protocol`), judged against the grader's own Tasks.

:func:`course.tasks.common.judge` rebuilds each case's inputs and reference itself. A verdict carries a
message for visible tests and a ``kind`` for hidden ones: a few words from a fixed vocabulary, so that
nothing a worker sends (an exception's type name, a message) can carry a hidden test's inputs into the
feedback.
"""

from __future__ import annotations

from dataclasses import dataclass

import gpusim
from course.tasks.common import NOT_IMPLEMENTED, judge

from .recording import Step

PASSED, FAILED, ERROR, TIMEOUT, MISSING = "passed", "failed", "error", "timeout", "missing"
STATUSES = (PASSED, FAILED, ERROR, TIMEOUT, MISSING)
FAILURE_KINDS = (  # words in a judge message -> the failure kind a hidden test may reveal
    ("never launched", "kernel never launched"),
    ("launched wrongly", "wrong launch configuration"),
    ("launched the kernel wrongly", "wrong launch configuration"),
    ("wrong results", "wrong values"),
    ("budget is", "over the memory-traffic budget"),
)
SIMULATOR_ERRORS = frozenset(name for name, value in vars(gpusim).items()
                             if isinstance(value, type) and issubclass(value, Exception))


@dataclass(frozen=True)
class Verdict:
    status: str
    message: str  # for the learner, when the call is a visible one
    kind: str = ""  # a few words that reveal nothing of the inputs (hidden tests show only this)


def error_kind(error_type: str) -> str:
    """An exception's type as a hidden test may show it. The learner's code picks which exception it raises,
    so a name per type would carry bits of a hidden input out: three words in all."""
    if error_type == NOT_IMPLEMENTED:
        return "not implemented"
    return "gpusim stopped the kernel" if error_type in SIMULATOR_ERRORS else "raised an exception"


def _failure_kind(result: dict, judged: str | None) -> str:
    """The kind of a failure from the trusted judge's message only (a worker's own `extra` text is not)."""
    if result["error"]:
        return error_kind(result["error"]["type"])
    return next((kind for words, kind in FAILURE_KINDS if judged and words in judged), "failed")


def judge_results(step: Step, results: list[dict]) -> Verdict | None:
    """The verdict on the first failing case of one Task, or None when every case passes."""
    for case, result in zip(step.task.cases, results, strict=True):
        try:
            judged = judge(step.task, case, result)
        except Exception as error:  # noqa: BLE001 (data odd enough to upset the comparison)
            return Verdict(FAILED, f"{step.task.name}: the results cannot be compared with the reference "
                                   f"({type(error).__name__}).", "malformed results")
        message = judged or result.get("extra")
        if message:
            return Verdict(FAILED, message, _failure_kind(result, judged))
    return None


def kernel_refused(step: Step, error: dict) -> Verdict:
    """The learner's kernel could not be taken out of the notebook (it uses a list, say)."""
    return Verdict(FAILED, f"{step.task.name}: {error['type']}: {error['message']}",
                   error_kind(error["type"]))


def missing_names(names: list[str]) -> Verdict:
    listed = ", ".join(f"`{name}`" for name in names)
    return Verdict(ERROR, f"the notebook defines no {listed}: was it renamed or its cell deleted?",
                   "name not defined")


def check_refused(function: str, failure: str | None) -> Verdict:
    message = failure or "the check stopped before all its tests ran"
    return Verdict(FAILED, f"{function}: {message}", "check refused the code")


def passed(steps: tuple[Step, ...]) -> Verdict:
    names = ", ".join(step.task.name for step in steps)
    cases = sum(len(step.task.cases) for step in steps)
    return Verdict(PASSED, f"✓ {names}: {cases} cases passed.")
