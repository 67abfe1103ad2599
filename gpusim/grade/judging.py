"""Trusted verdicts: the worker's plain results for one check call, validated and judged.

Only arrays, counters, launch configurations and error names come from the worker, and each is checked
against what the grader's own copy of the Task expects (names, dtypes, shapes, number of cases) before
:func:`gpusim.tasks.common.judge` compares it with the reference. One more check catches results that did
not come from a kernel at all: gpusim must have recorded at least one global write per written element.

Limitation: the worker is the learner's process, so a submission that replaces gpusim inside it and fakes
both the arrays and the counters can still pass; judging here only guarantees that patching numpy, the
checks or the judge changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpusim.tasks.common import NOT_IMPLEMENTED, Case, Task, judge

from .assignments import CheckCall
from .recording import KERNEL, Step
from .wire import WireError, decode_array

PASSED, FAILED, ERROR, TIMEOUT, MISSING = "passed", "failed", "error", "timeout", "missing"
STATUSES = (PASSED, FAILED, ERROR, TIMEOUT, MISSING)
FAILURE_KINDS = (  # words in a judge message -> the failure kind a hidden test may reveal
    ("never launched", "kernel never launched"),
    ("launched wrongly", "wrong launch configuration"),
    ("launched the kernel wrongly", "wrong launch configuration"),
    ("wrong results", "wrong values"),
    ("budget is", "over the memory-traffic budget"),
)


@dataclass(frozen=True)
class Verdict:
    status: str
    message: str  # for the learner, when the call is a visible one
    kind: str = ""  # a few words that reveal nothing of the inputs (hidden tests show only this)


def _failure_kind(result: dict, message: str) -> str:
    error = result.get("error")
    if error:
        return "not implemented" if error["type"] == NOT_IMPLEMENTED else f"raised {error['type']}"
    return next((kind for words, kind in FAILURE_KINDS if words in message), "failed")


def _int(value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise WireError("a counter is not a whole number")
    return value


def _launch(value) -> list:
    if not (isinstance(value, list) and len(value) == 3 and isinstance(value[0], list) and
            isinstance(value[1], list) and len(value[0]) == len(value[1]) == 3):
        raise WireError("a launch configuration is malformed")
    return [[_int(v) for v in value[0]], [_int(v) for v in value[1]], _int(value[2])]


def _error(value) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str) or \
            not isinstance(value.get("message"), str):
        raise WireError("an error is malformed")
    return {"type": value["type"][:100], "message": value["message"][:3000]}


def decode_result(step: Step, case: Case, raw) -> dict:
    """A worker's result for one case as :func:`judge` takes it; WireError when it is not what the Task
    produces (wrong output names, dtypes or, for kernels, shapes)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("outputs"), dict) or \
            not isinstance(raw.get("report"), dict) or not isinstance(raw.get("launches"), list):
        raise WireError("a case's result is malformed")
    names = [output.name for output in step.task.outputs]
    if sorted(raw["outputs"]) != sorted(names):
        raise WireError(f"the outputs are {sorted(raw['outputs'])}, not {sorted(names)}")
    outputs = {name: decode_array(raw["outputs"][name]) for name in names}
    if step.kind == KERNEL:
        args = step.task.make_args(case)
        for name, array in outputs.items():
            if array.dtype != args[name].dtype or array.shape != np.shape(args[name]):
                raise WireError(f"`{name}` came back as {array.dtype} {array.shape}, unlike the check's")
    elif any(array.dtype != np.float64 for array in outputs.values()):
        raise WireError("a function's outputs must come back as float64")
    extra = raw.get("extra")
    if extra is not None and not isinstance(extra, str):
        raise WireError("a further check's message is malformed")
    return {"outputs": outputs, "report": {str(k): _int(v) for k, v in raw["report"].items()},
            "launches": [_launch(launch) for launch in raw["launches"]], "error": _error(raw.get("error")),
            "extra": extra}


def _written(task: Task, outputs: dict) -> int:
    """Elements of the outputs that no longer hold the value the check filled in before the launch."""
    count = 0
    for output in task.outputs:
        if output.fill is None:
            continue
        values = outputs[output.name]
        unchanged = np.isnan(values) if isinstance(output.fill, float) and math.isnan(output.fill) \
            else values == output.fill
        count += int(values.size - np.count_nonzero(unchanged))
    return count


def _unrecorded_writes(step: Step, result: dict) -> str | None:
    """A complaint when the outputs hold more written elements than gpusim recorded global writes."""
    if step.kind != KERNEL or result["error"]:
        return None
    written, recorded = _written(step.task, result["outputs"]), result["report"].get("global_stores", 0)
    if written <= recorded:
        return None
    return (f"{step.task.name}: the results did not come from the kernel (the outputs hold {written} written "
            f"elements, but gpusim recorded {recorded} global writes).")


def judge_step(step: Step, results) -> tuple[str, str] | None:
    """(message, kind) of the first failing case of one Task, or None when every case passes."""
    if not isinstance(results, list) or len(results) != len(step.task.cases):
        raise WireError(f"{step.task.name}: results for the wrong number of cases")
    for case, raw in zip(step.task.cases, results, strict=True):
        result = decode_result(step, case, raw)
        message = judge(step.task, case, result) or _unrecorded_writes(step, result) or result["extra"]
        if message:
            return message, _failure_kind(result, message)
    return None


def judge_call(call: CheckCall, reply: dict) -> Verdict:
    """The verdict on one check call from the worker's reply to it."""
    if reply.get("missing"):
        names = ", ".join(f"`{name}`" for name in reply["missing"] if isinstance(name, str))
        return Verdict(ERROR, f"the notebook defines no {names}: was it renamed or its cell deleted?",
                       "name not defined")
    steps = reply.get("steps")
    try:
        if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
            raise WireError("the reply has no list of results")
        for planned, got in zip(call.steps, steps, strict=False):
            if got.get("kind") != planned.kind:
                raise WireError("results of another kind of check")
            failure = judge_step(planned, got.get("results"))
            if failure:
                return Verdict(FAILED, *failure)
    except Exception as error:  # noqa: BLE001 (WireError, or data odd enough to upset the comparison)
        return Verdict(FAILED, f"the results did not come back in the form the check expects ({error}).",
                       "malformed results")
    if len(steps) < len(call.steps):
        failure = reply.get("failure")
        message = str(failure)[:3000] if failure else "the check stopped before all its tests ran"
        return Verdict(FAILED, f"{call.function}: {message}", "check refused the code")
    names = ", ".join(step.task.name for step in call.steps)
    cases = sum(len(step.task.cases) for step in call.steps)
    return Verdict(PASSED, f"✓ {names}: {cases} cases passed.")
