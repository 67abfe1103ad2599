"""The kernel runner (W2): runs a learner's kernels under gpusim, in a process where no learner code ran.

    python -m course.grade.runner     (started by the grader in its sandbox, never by hand)

It imports gpusim and the assignment's checks first, then only ever receives plain data: for each kernel
Task, the check call that lists it, the kernel as a spec and, where the learner writes the launch function,
one launch plan per case. :func:`course.tasks.common.run` rebuilds the kernel from its spec, passes it
through Numba's real CUDA compiler (a kernel that compiles cannot touch Python objects, so it cannot patch
gpusim) and runs it under gpusim. The results go back as plain data for the grader to judge. Numba's CUDA
simulator is off here: the compiler runs in this process.
"""

from __future__ import annotations

import importlib
import json

from course import compilegate

from . import limits, wire
from .protocol import MAX_NAME, MAX_TEXT
from .recording import KERNEL, planned_steps


def _plain(result: dict) -> dict:
    """A result of common.run as JSON-ready data."""
    error = result["error"]
    return {"outputs": {name: wire.encode_array(array) for name, array in result["outputs"].items()},
            "report": {str(name): int(value) for name, value in result["report"].items()},
            "launches": result["launches"], "compiled": result.get("compiled"),
            "error": None if error is None else {"type": str(error["type"])[:MAX_NAME],
                                                 "message": str(error["message"])[:MAX_TEXT]}}


class Runner:
    def __init__(self, module_name: str):
        from course.tasks import common

        self.module = importlib.import_module(module_name)
        self.run = common.run
        self._steps: dict[str, tuple] = {}

    def results(self, request: dict) -> list[dict]:
        """Every case of the requested kernel Task, run on the learner's kernel and plans."""
        keywords = {key: tuple(value) if isinstance(value, list) else value
                    for key, value in request["keywords"].items()}
        key = json.dumps([request["function"], request["arg_count"], request["keywords"]], sort_keys=True)
        if key not in self._steps:
            self._steps[key] = planned_steps(self.module, request["function"], request["arg_count"], keywords)
        step = self._steps[key][request["step"]]
        if step.kind != KERNEL:
            raise ValueError(f"step {request['step']} of {request['function']} is not a kernel Task")
        results = []
        for index, case in enumerate(step.task.cases):
            learner = {"kernel": request["kernel"]}
            if request["plans"] is not None:
                learner["launches"] = request["plans"][index]
            results.append(_plain(self.run(step.task, learner, case)))
        return results


def main() -> None:
    requests, replies = limits.take_pipes()
    start = json.loads(requests.readline())
    limits.apply(start["resources"])
    runner = Runner(start["module"])
    available, reason = compilegate.available()
    limits.send(replies, {"type": "ready", "compiler": {"available": available, "reason": reason[:MAX_TEXT]}})
    for line in requests:
        limits.send(replies, {"type": "results", "results": runner.results(json.loads(line))})


if __name__ == "__main__":
    main()
