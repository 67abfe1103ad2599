"""The learner's worker (W1): runs one submission's cells, then hands the learner's objects out as plain data.

    python -m course.grade.worker     (started by the grader in its sandbox, never by hand)

Everything here may be patched by the learner's cells, so nothing here decides a grade. For each check call
``{function, names, keywords}`` it calls the check function (as imported before any learner cell ran) with
the checking hooks replaced (:mod:`course.grade.recording`), and answers, per Task the check hands over:

* a kernel Task: the kernel as a spec (:func:`course.kernelsource.describe`) and, when the learner writes the
  launch function, its launch plan for each case (:func:`course.tasks.common.plan_launches`). The kernel
  runner (:mod:`.runner`) rebuilds, compile-gates and runs it, in a process no learner code has touched;
* a plain-Python Task (online softmax, NumPy flash attention): the outputs of
  :func:`course.tasks.common.run_function` for each case, which the grader judges. Host code has to run
  somewhere: these Tasks, unlike kernels, stay open to a notebook that patches things inside this process.
  Their chunked inputs are not here: the grader sends each case's other arguments with the call, and a
  :class:`ServedArray` asks the grader for each chunk the learner's code reads (:mod:`.serving`).
"""

from __future__ import annotations

import importlib
import json
import linecache

import numpy as np

from . import limits, wire
from .protocol import MAX_NAME, MAX_TEXT
from .recording import FUNCTION, KERNEL, hooks_replaced


def _error(error: BaseException) -> dict:
    from course.tasks.common import _error as plain_error

    described = plain_error(error)
    return {"type": described["type"][:MAX_NAME], "message": described["message"][:MAX_TEXT]}


def _run_cell(label: str, source: str, namespace: dict) -> str | None:
    """Run one cell like a notebook would; the error it raised, in words, or None."""
    if source.lstrip().startswith(("%", "!")):
        return None
    filename = f"<{label}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        exec(compile(source, filename, "exec"), namespace)
    except (Exception, SystemExit) as error:  # noqa: BLE001 (a failing cell is reported, like in Jupyter)
        return f"{label} raised {limits.describe(error, MAX_TEXT)}"
    return None


def _plain(result: dict, extra: str | None = None) -> dict:
    """A result of common.run_function as JSON-ready data."""
    error = result["error"]
    return {"outputs": {name: wire.encode_array(array) for name, array in result["outputs"].items()},
            "report": {}, "launches": [],
            "error": None if error is None else {"type": error["type"][:MAX_NAME],
                                                 "message": error["message"][:MAX_TEXT]},
            "extra": None if extra is None else str(extra)[:MAX_TEXT]}


def _extra_message(extra, case, function) -> str | None:
    """A check function's further test of a plain-Python task (part 07's memory check), in words."""
    try:
        return None if extra is None else extra(case, function)
    except (Exception, SystemExit) as error:  # noqa: BLE001
        return f"the further check raised {limits.describe(error, MAX_TEXT)}"


def kernel_step(task, learner: dict) -> dict:
    """A kernel Task's learner half: the kernel's spec and, where the learner launches it, the plans."""
    from course.kernelsource import describe
    from course.tasks.common import plan_launches, refuse_course_code

    try:
        for role, given in learner.items():
            refuse_course_code(given, f"{task.name} ({role})")
        spec = describe(learner["kernel"])
        plans = None if task.configure is not None else \
            [plan_launches(task, learner["launch"], case) for case in task.cases]
    except Exception as error:  # noqa: BLE001 (a kernel that cannot leave the notebook fails its check)
        return {"kind": KERNEL, "kernel": None, "plans": None, "error": _error(error)}
    return {"kind": KERNEL, "kernel": spec, "plans": plans, "error": None}


class Grader:
    """The grader at the other end of this worker's pipes, as the chunked inputs' source."""

    def __init__(self, requests, replies):
        self.requests, self.replies = requests, replies

    def rows(self, step: int, case: int, name: str, start: int, stop: int) -> np.ndarray:
        limits.send(self.replies, {"type": "read", "step": step, "case": case, "input": name, "start": start,
                                   "stop": stop})
        return wire.decode_array(json.loads(self.requests.readline())["data"])


class ServedArray:
    """A chunked input that stays with the grader: its shape and dtype, and rows fetched when indexed (the
    rows of one index at a time, which ChunkedReader keeps to a chunk)."""

    def __init__(self, grader: Grader, where: tuple[int, int, str], shape: list[int], dtype: str):
        self._grader, self._where = grader, where
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.ndim, self.size = len(self.shape), int(np.prod(self.shape))

    def __len__(self) -> int:
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        from course.tasks.chunks import ChunkReadError

        raise ChunkReadError(f"`{self._where[2]}` stays with the grader: read it through the reader you were "
                             f"given, a chunk at a time.")

    def __getitem__(self, key):
        first, rest = (key[0], key[1:]) if isinstance(key, tuple) and key else (key, ())
        whole = first is Ellipsis  # x[...]: every row, the key applies as it is
        rows = np.arange(len(self))[slice(None) if whole else first]
        if np.size(rows) == 0:
            block, start = np.empty((0, *self.shape[1:]), self.dtype), 0
        else:
            start = int(np.min(rows))
            block = self._grader.rows(*self._where, start, int(np.max(rows)) + 1)
        return block[key] if whole else block[(rows - start, *rest)]


def _argument(value: dict, grader: Grader, where: tuple[int, int, str]):
    """One argument of a served case, as :func:`.serving.encode_argument` wrote it."""
    (kind, data), = value.items()
    if kind == "chunked":
        return ServedArray(grader, where, data["shape"], data["dtype"])
    return wire.decode_array(data) if kind == "array" else data


def function_step(task, function, call, extra, served: list[dict] | None, grader: Grader, step: int) -> dict:
    """A plain-Python Task's learner half: the outputs for each case, its arguments as the grader sent them
    when it hands out the inputs (``served``), else made here."""
    from course.tasks.common import run_function

    results = []
    for index, case in enumerate(task.cases):
        args = None if served is None else {name: _argument(value, grader, (step, index, name))
                                            for name, value in served[index].items()}
        results.append(_plain(run_function(task, function, case, call, args),
                              _extra_message(extra, case, function)))
    return {"kind": FUNCTION, "results": results}


class Checks:
    """The check functions as they were before any learner code ran."""

    def __init__(self, module_name: str, grader: Grader):
        self.module = importlib.import_module(module_name)
        self.functions = {name: getattr(self.module, name) for name in dir(self.module)
                          if name.startswith("check_")}
        self.grader = grader

    def answer(self, request: dict, namespace: dict) -> dict:
        """The learner's objects for one check call, as plain data; never a verdict."""
        missing = [name for name in request["names"] if name not in namespace]
        if missing:
            return {"type": "missing", "names": missing}
        steps = []
        keywords = {key: tuple(value) if isinstance(value, list) else value
                    for key, value in request["keywords"].items()}
        inputs = request["inputs"]

        def on_function(task, function, call, extra):
            step = len(steps)
            steps.append(function_step(task, function, call, extra, inputs.get(str(step)), self.grader, step))

        failure = None
        try:
            with hooks_replaced(self.module, lambda task, learner: steps.append(kernel_step(task, learner)),
                                on_function):
                self.functions[request["function"]](*(namespace[name] for name in request["names"]),
                                                    **keywords)
        except (Exception, SystemExit) as error:  # noqa: BLE001 (the grader reports it)
            failure = limits.describe(error, MAX_TEXT)
        return {"type": "answer", "steps": steps, "failure": failure}


def main() -> None:
    requests, replies = limits.take_pipes()
    start = json.loads(requests.readline())
    limits.apply(start["resources"])
    checks = Checks(start["module"], Grader(requests, replies))
    importlib.import_module("course.kernelsource")
    namespace = {"__name__": "__main__"}
    errors = []
    for index, label, source in start["cells"]:
        limits.send(replies, {"type": "running", "cell": index})
        if error := _run_cell(label, source, namespace):
            errors.append(error)
    limits.send(replies, {"type": "ready", "cell_errors": errors})
    for line in requests:
        try:
            reply = checks.answer(json.loads(line), namespace)
            limits.send(replies, reply)
        except (Exception, SystemExit) as error:  # noqa: BLE001 (e.g. results that cannot be encoded)
            failure = f"the grader's worker failed: {limits.describe(error, MAX_TEXT)}"
            limits.send(replies, {"type": "answer", "steps": [], "failure": failure})


if __name__ == "__main__":
    main()
