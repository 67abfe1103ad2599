"""The messages between the grader and its two workers, and the strict form each must have.

The learner's worker (W1, :mod:`.worker`) runs learner code, which can write to W1's reply pipe: every message
from it is checked here against the schema of the message the grader is waiting for, with a size cap derived
from what the check can legitimately return. Anything else is a :class:`~.wire.WireError`, which costs that
learner's task and nothing more. The kernel runner (W2, :mod:`.runner`) runs only the course's code on the
learner's kernels; its replies are checked the same way, as a second line of defence.

Grader to W1: ``start {module, cells, limits}``, then ``call {function, names, keywords, inputs}`` per check
call (``inputs``: the arguments of the plain-Python Tasks whose inputs the grader hands out a chunk at a
time, :mod:`.serving`). W1 to grader: ``running {cell}`` before each cell, ``ready {cell_errors}``, then per
call ``missing {names}`` or ``answer {steps, failure}``, one step per Task the check hands over:
``{kind: "kernel", kernel: spec, plans, error}`` or ``{kind: "function", results}``; before its answer, any
number of ``read {step, case, input, start, stop}``, each answered by the grader with ``chunk {data}``.
Grader to W2: ``start {module, limits}``, then ``run {function, arg_count, keywords, step, kernel, plans}``.
W2 to grader: ``ready {compiler}``, then ``results {results}`` (one :func:`course.tasks.common.run` result
per case).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from course.kernelsource import KernelSourceError, validate
from course.tasks.common import Case, Task

from .assignments import CheckCall
from .recording import FUNCTION, KERNEL, Step
from .wire import WireError, decode_array, encoded_size

MAX_TEXT = 3000  # characters of an error message or a further check's message
MAX_NAME = 200
MAX_TYPE_NAME = 16  # a number's type in a launch plan: int, float32, ...
MAX_SPEC_BYTES = 8 * 2**20  # one kernel with its device functions and constant arrays
MAX_LAUNCHES = 64  # launches a launch function may plan for one case
MAX_COUNTERS = 64
SETUP_CAP = 2**20  # running / ready messages
MESSAGE_SLACK = 64 * 2**10
CASE_SLACK = 16 * 2**10


def _text(value, what: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise WireError(f"{what} is not a string of at most {limit} characters")
    return value


def _count(value, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise WireError(f"{what} is not a whole number")
    return value


def _keys(message, required: set[str], what: str, optional: frozenset[str] = frozenset()) -> dict:
    if not isinstance(message, dict) or not required <= message.keys() <= required | optional:
        raise WireError(f"{what} does not have the fields {sorted(required)}")
    return message


def _typed(message, kind: str) -> dict:
    if not isinstance(message, dict) or message.get("type") != kind:
        got = message.get("type") if isinstance(message, dict) else None
        raise WireError(f"expected a `{kind}` message, got {str(got)[:40]!r}")
    return message


def error(value) -> dict | None:
    """None or ``{type, message}``: an exception in words."""
    if value is None:
        return None
    value = _keys(value, {"type", "message"}, "an error")
    return {"type": _text(value["type"], "an error's type", MAX_NAME),
            "message": _text(value["message"], "an error")}


# -------------------------------------------------------------------------------------------- from W1

def setup_message(message, cell_indices: set[int]) -> dict:
    """``running {cell}`` (one of the cells sent) or ``ready {cell_errors}``."""
    if isinstance(message, dict) and message.get("type") == "running":
        _keys(message, {"type", "cell"}, "a running message")
        if not isinstance(message["cell"], int) or isinstance(message["cell"], bool) \
                or message["cell"] not in cell_indices:
            raise WireError("a running message names a cell that was not sent")
        return message
    _keys(_typed(message, "ready"), {"type", "cell_errors"}, "a ready message")
    errors = message["cell_errors"]
    if not isinstance(errors, list) or len(errors) > len(cell_indices):
        raise WireError("a ready message has no list of cell errors")
    return {"type": "ready", "cell_errors": [_text(e, "a cell error") for e in errors]}


def _plan(value, names: set[str]) -> dict:
    """A launch plan of :func:`course.tasks.common.plan_launches` for one case."""
    value = _keys(value, {"launches", "error"}, "a launch plan")
    if not isinstance(value["launches"], list) or len(value["launches"]) > MAX_LAUNCHES:
        raise WireError(f"a launch plan has no list of at most {MAX_LAUNCHES} launches")
    for launch in value["launches"]:
        launch = _keys(launch, {"grid", "block", "shared", "args"}, "a planned launch")
        for key in ("grid", "block"):
            if not isinstance(launch[key], list) or len(launch[key]) != 3:
                raise WireError(f"a planned launch's {key} is not three numbers")
            for dim in launch[key]:
                _count(dim, f"a planned launch's {key}")
        _count(launch["shared"], "a planned launch's shared memory")
        if not isinstance(launch["args"], list) or len(launch["args"]) > len(names) + 16:
            raise WireError("a planned launch has no list of arguments")
        for arg in launch["args"]:
            if isinstance(arg, dict) and arg.keys() == {"arg"} and isinstance(arg["arg"], str) \
                    and arg["arg"] in names:
                continue
            if isinstance(arg, dict) and arg.keys() == {"value", "type"} and isinstance(arg["type"], str) \
                    and len(arg["type"]) <= MAX_TYPE_NAME and isinstance(arg["value"], (int, float)) \
                    and not isinstance(arg["value"], bool) and abs(arg["value"]) < 2**63:
                continue
            raise WireError("a planned launch's argument is neither one of the check's arrays nor a number")
    error(value["error"])
    return value


def _kernel_step(raw: dict, task: Task) -> dict:
    raw = _keys(raw, {"kind", "kernel", "plans", "error"}, "a kernel step")
    if raw["error"] is not None:
        return {"kind": KERNEL, "kernel": None, "plans": None, "error": error(raw["error"])}
    try:
        validate(raw["kernel"])
    except KernelSourceError as problem:
        raise WireError(f"the kernel's description is refused: {str(problem)[:300]}") from None
    if task.configure is not None:
        if raw["plans"] is not None:
            raise WireError("launch plans for a check that launches the kernel itself")
        return {"kind": KERNEL, "kernel": raw["kernel"], "plans": None, "error": None}
    if not isinstance(raw["plans"], list) or len(raw["plans"]) != len(task.cases):
        raise WireError("launch plans for the wrong number of cases")
    plans = [_plan(plan, set(task.make_args(case)))
             for plan, case in zip(raw["plans"], task.cases, strict=True)]
    return {"kind": KERNEL, "kernel": raw["kernel"], "plans": plans, "error": None}


def _function_step(raw: dict, task: Task) -> dict:
    raw = _keys(raw, {"kind", "results"}, "a function step")
    if not isinstance(raw["results"], list) or len(raw["results"]) != len(task.cases):
        raise WireError(f"{task.name}: results for the wrong number of cases")
    results = [result(r, Step(FUNCTION, task), case)
               for r, case in zip(raw["results"], task.cases, strict=True)]
    return {"kind": FUNCTION, "results": results}


def answer(message, call: CheckCall) -> dict:
    """W1's ``missing`` or ``answer`` to one check call, each step checked against the Task it answers."""
    if isinstance(message, dict) and message.get("type") == "missing":
        _keys(message, {"type", "names"}, "a missing message")
        names = message["names"]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names) \
                or not set(names) <= set(call.names):
            raise WireError("a missing message names objects the check did not ask for")
        return {"type": "missing", "names": names}
    _keys(_typed(message, "answer"), {"type", "steps", "failure"}, "an answer")
    steps = message["steps"]
    if not isinstance(steps, list) or len(steps) > len(call.steps):
        raise WireError("an answer has more steps than the check has Tasks")
    checked = []
    for planned, raw in zip(call.steps, steps, strict=False):
        if not isinstance(raw, dict) or raw.get("kind") != planned.kind:
            raise WireError("an answer's step is of another kind than the check's")
        checked.append(_kernel_step(raw, planned.task) if planned.kind == KERNEL else
                       _function_step(raw, planned.task))
    failure = message["failure"]
    return {"type": "answer", "steps": checked,
            "failure": None if failure is None else _text(failure, "a check's failure")}


def read(message, serving) -> dict:
    """W1's ``read {step, case, input, start, stop}``: rows of a chunked input that ``serving`` (the call's
    :class:`~.serving.Serving`) holds, at most one chunk of them."""
    _keys(message, {"type", "step", "case", "input", "start", "stop"}, "a read")
    for key in ("step", "case", "start", "stop"):
        _count(message[key], f"a read's {key}")
    _text(message["input"], "a read's input", MAX_NAME)
    return serving.check(message)


def answer_or_read(message, call: CheckCall, serving) -> dict:
    """What W1 may send while a check call runs: a ``read`` or its answer."""
    if isinstance(message, dict) and message.get("type") == "read":
        return read(message, serving)
    return answer(message, call)


# -------------------------------------------------------------------------------------------- from W2

def ready(message) -> dict:
    """W2's ``ready {compiler}``: whether Numba's CUDA compiler can gate kernels there, and why not."""
    _keys(_typed(message, "ready"), {"type", "compiler"}, "a ready message")
    compiler = _keys(message["compiler"], {"available", "reason"}, "the compiler's availability")
    if not isinstance(compiler["available"], bool):
        raise WireError("the compiler's availability is not true or false")
    return {"available": compiler["available"], "reason": _text(compiler["reason"], "a reason")}


def results(message, step: Step) -> list[dict]:
    """W2's results for one kernel step: one checked result per case."""
    _keys(_typed(message, "results"), {"type", "results"}, "a results message")
    raw = message["results"]
    if not isinstance(raw, list) or len(raw) != len(step.task.cases):
        raise WireError(f"{step.task.name}: results for the wrong number of cases")
    return [result(r, step, case) for r, case in zip(raw, step.task.cases, strict=True)]


def _launch(value) -> list:
    if not (isinstance(value, list) and len(value) == 3 and isinstance(value[0], list) and
            isinstance(value[1], list) and len(value[0]) == len(value[1]) == 3):
        raise WireError("a launch configuration is malformed")
    return [[_count(v, "a grid size") for v in value[0]], [_count(v, "a block size") for v in value[1]],
            _count(value[2], "a shared memory size")]


def result(raw, step: Step, case: Case) -> dict:
    """One case's result as :func:`course.tasks.common.judge` takes it; WireError when it is not what the
    Task produces (other output names, dtypes or, for kernels, shapes)."""
    raw = _keys(raw, {"outputs", "report", "launches", "error"}, "a case's result",
                frozenset({"extra", "compiled"}))
    if raw.get("compiled") not in (None, True, False):
        raise WireError("a case's result says something odd about the compiler")
    if not isinstance(raw["outputs"], dict) or not isinstance(raw["report"], dict) or \
            not isinstance(raw["launches"], list) or len(raw["launches"]) > MAX_LAUNCHES or \
            len(raw["report"]) > MAX_COUNTERS:
        raise WireError("a case's result is malformed")
    names = [output.name for output in step.task.outputs]
    if sorted(raw["outputs"]) != sorted(names):
        raise WireError(f"the outputs are {sorted(raw['outputs'])[:8]}, not {sorted(names)}")
    outputs = {name: decode_array(raw["outputs"][name]) for name in names}
    if step.kind == KERNEL:
        args = step.task.make_args(case)
        for name, array in outputs.items():
            if array.dtype != args[name].dtype or array.shape != np.shape(args[name]):
                raise WireError(f"`{name}` came back as {array.dtype} {array.shape}, unlike the check's")
    elif any(array.dtype != np.float64 for array in outputs.values()):
        raise WireError("a function's outputs must come back as float64")
    extra = raw.get("extra")
    return {"outputs": outputs, "compiled": raw.get("compiled"),
            "report": {_text(k, "a counter's name", MAX_NAME): _count(v, "a counter")
                       for k, v in raw["report"].items()},
            "launches": [_launch(launch) for launch in raw["launches"]], "error": error(raw["error"]),
            "extra": None if extra is None else _text(extra, "a further check's message")}


# ---------------------------------------------------------------------------------------------- caps

def _array_bytes(task: Task, case: Case, names) -> int:
    args = task.make_args(case)
    return sum(np.asarray(args[name]).nbytes for name in names if isinstance(args[name], np.ndarray))


def results_cap(step: Step) -> int:
    """The most bytes W2's results for one kernel step can take: the outputs, encoded, plus room for words."""
    names = [output.name for output in step.task.outputs]
    return MESSAGE_SLACK + sum(encoded_size(_array_bytes(step.task, case, names)) + CASE_SLACK
                               for case in step.task.cases)


def _function_case_cap(task: Task, case: Case) -> int:
    """A plain-Python task returns float64 arrays; allow them as many elements as all its inputs together."""
    args = task.make_args(case)
    elements = sum(math.prod(np.shape(value)) for value in args.values() if isinstance(value, np.ndarray))
    return encoded_size(8 * max(elements, 1)) + CASE_SLACK + MAX_TEXT * 2


def answer_cap(call: CheckCall) -> int:
    """The most bytes W1's answer to one check call can take."""
    cap = MESSAGE_SLACK + MAX_TEXT * 2
    for step in call.steps:
        if step.kind == KERNEL:
            cap += MAX_SPEC_BYTES + (CASE_SLACK * len(step.task.cases) if step.task.configure is None else 0)
        else:
            cap += sum(_function_case_cap(step.task, case) for case in step.task.cases)
    return cap


@dataclass(frozen=True)
class RunRequest:
    """What W2 needs to run one kernel step: the check call (to list its Tasks) and the learner's data."""

    function: str
    arg_count: int
    keywords: dict
    step: int
    kernel: dict
    plans: list | None

    def message(self) -> dict:
        return {"type": "run", "function": self.function, "arg_count": self.arg_count,
                "keywords": self.keywords, "step": self.step, "kernel": self.kernel, "plans": self.plans}
