"""The chunked inputs of plain-Python tasks, held by the grader and handed out a chunk at a time.

The online softmax (06) and the NumPy FlashAttention (07) read their long inputs through
:class:`~course.tasks.chunks.ChunkedReader` s (``Task.chunked``), and their method is judged from the rows
they read (``Task.reads_rule``). In classroom grading those inputs never enter the learner worker: for each
check call the grader makes the cases' arguments itself (:class:`Serving`), sends the small ones with the
call and, of each chunked input, only its shape and dtype. The worker's reader asks for rows
(``read {step, case, input, start, stop}``, at most the case's chunk); the grader answers with those rows
(``chunk {data}``) and counts them. That count, never one made in the learner's process, is what the reads
rule judges; the learner's code sees only the rows it asked for.

What the grader cannot see is what the learner's process keeps between reads: a function that copies every
chunk it reads and computes from the copy reads exactly as an online one does. Only the method's reads are
judged here; what a function keeps between chunks is measured in the learner's worker, by the check's further
test (:class:`course.tasks.chunks.StateProbe`), and reported like Part 7's memory check.
"""

from __future__ import annotations

import numpy as np

from .assignments import CheckCall
from .recording import FUNCTION
from .wire import WireError, encode_array


def encode_argument(value):
    """One argument of a plain-Python task as the call message carries it."""
    if isinstance(value, np.ndarray):
        return {"array": encode_array(value)}
    if isinstance(value, (bool, np.bool_)):
        return {"bool": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"int": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"float": float(value)}
    raise TypeError(f"a served task's argument of type {type(value).__name__}")


class Serving:
    """One check call's chunked inputs: what the learner worker may ask for, and the rows it asked for."""

    def __init__(self, call: CheckCall):
        self.tasks = {index: step.task for index, step in enumerate(call.steps)
                      if step.kind == FUNCTION and step.task.chunked}
        self._args = {index: [task.make_args(case) for case in task.cases]
                      for index, task in self.tasks.items()}
        self._reads: dict[tuple[int, int], dict[str, list[int]]] = {}

    def inputs(self) -> dict[str, list[dict]]:
        """For the call message: per step with chunked inputs, per case, every argument, the chunked ones as
        their shape and dtype only."""
        served = {}
        for index, task in self.tasks.items():
            chunked = dict(task.chunked)
            served[str(index)] = [
                {name: {"chunked": {"shape": list(value.shape), "dtype": value.dtype.str}} if name in chunked
                 else encode_argument(value) for name, value in args.items()}
                for args in self._args[index]]
        return served

    def check(self, message: dict) -> dict:
        """A ``read`` that names a chunked input of this call and at most one chunk of its rows; WireError for
        any other."""
        step, case, name = message["step"], message["case"], message["input"]
        task = self.tasks.get(step)
        if task is None or not 0 <= case < len(task.cases) or name not in dict(task.chunked):
            raise WireError("a read of something that is not one of this check's chunked inputs")
        args = self._args[step][case]
        rows, limit = len(args[name]), int(args[dict(task.chunked)[name]])
        start, stop = message["start"], message["stop"]
        if not 0 <= start < stop <= rows:
            raise WireError(f"a read of rows {start}:{stop} of `{name}`, which has {rows}")
        if stop - start > limit:
            raise WireError(f"a read of {stop - start} rows of `{name}` at once, more than its chunk of "
                            f"{limit}")
        return message

    def serve(self, read: dict) -> dict:
        """The rows a checked read asks for, counted."""
        step, case, name, start, stop = (read[key] for key in ("step", "case", "input", "start", "stop"))
        self._reads.setdefault((step, case), {}).setdefault(name, []).append(stop - start)
        return {"type": "chunk", "data": encode_array(self._args[step][case][name][start:stop])}

    def with_reads(self, step: int, results: list[dict]) -> list[dict]:
        """A step's checked results with the rows the grader served for each case (none read: empty lists)."""
        if step not in self.tasks:
            return results
        names = [name for name, _ in self.tasks[step].chunked]
        return [result | {"reads": {name: list(self._reads.get((step, case), {}).get(name, []))
                                    for name in names}}
                for case, result in enumerate(results)]
