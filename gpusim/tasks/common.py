"""The checking machinery behind the exercise notebooks.

A :class:`Task` describes one graded exercise: the cases it is checked on, how to build the inputs of a case,
how to launch the learner's kernel, the float64 (or exact) reference, the tolerance and the budgets on
:class:`gpusim.Report` counters. Checking is split in two halves that share only plain data, so that a grader
can run the first in an untrusted process and the second in a trusted one:

* :func:`run` executes the learner's code for one case under ``gpusim`` (with all checks on) and returns a
  plain dict: the output arrays, the summed report counters, the launch configurations and the error, if any.
* :func:`judge` rebuilds the case's inputs itself, computes the reference and returns ``None`` or a message a
  learner can act on. It never calls learner code.

:func:`check` runs every case, raises :class:`CheckFailed` with the message of the first failure and prints
one success line otherwise.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

import gpusim

MAX_SHOWN = 5  # wrong or unwritten elements listed in a message
KERNEL_TIMEOUT_S = 10.0  # an endless loop in a kernel fails the check instead of hanging the notebook
NOT_IMPLEMENTED = "NotImplementedError"


GENERIC_ERROR_HINTS = {
    "KernelTimeoutError": f"The check stops a launch after {KERNEL_TIMEOUT_S:g} s, and these inputs need "
                          f"well under a second: look for a loop whose variable never changes.",
}


class CheckFailed(AssertionError):
    """A check cell's failure: the message says what failed, for which case, and what to try."""


# ----------------------------------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Case:
    """One input configuration: named sizes (e.g. ``n=7`` or ``m, k, n``) and a random seed."""

    sizes: tuple[tuple[str, int], ...]
    seed: int

    @property
    def params(self) -> dict[str, int]:
        return dict(self.sizes)

    def label(self) -> str:
        return ", ".join(f"{name}={value}" for name, value in self.sizes) + f", seed={self.seed}"


def make_cases(sizes: Sequence[dict[str, int]], seeds: Sequence[int] = (0, 1, 2)) -> tuple[Case, ...]:
    """One case per size, cycling through the seeds (so every seed is used once there are enough sizes)."""
    return tuple(Case(tuple(size.items()), seeds[index % len(seeds)]) for index, size in enumerate(sizes))


@dataclass(frozen=True)
class Output:
    """A kernel argument the check reads back.

    ``fill`` is written into it before every launch: NaN (or an integer sentinel) exposes elements the kernel
    never wrote; ``None`` means the kernel accumulates into it (atomics), so it starts at zero.
    """

    name: str
    fill: float | int | None = math.nan


@dataclass(frozen=True)
class Budget:
    """An upper limit on one gpusim Report counter, e.g. global reads for a halo stencil."""

    counter: str  # a field of gpusim.Report: global_loads, global_stores, shared_loads, ...
    limit: Callable[[dict[str, int]], int]  # case sizes -> the most the kernel may use
    what: str  # words for the counter: "global reads"
    rule: str  # how the limit is made up: "one per element plus 2*RADIUS halo elements per block"
    hint: str = ""


@dataclass(frozen=True)
class Task:
    """Everything needed to check one exercise, without any learner code."""

    name: str  # the function the learner writes, as named in the notebook
    cases: tuple[Case, ...]
    make_args: Callable[[Case], dict[str, Any]]  # all kernel arguments, in order, outputs included
    outputs: tuple[Output, ...]
    reference: Callable[[Case, dict[str, Any]], dict[str, np.ndarray]]  # output name -> expected values
    configure: Callable[[Case], tuple] | None = None  # (grid, block[, stream, shared bytes]); None: learner's
    launcher: str = ""  # name of the learner's launch function, when the learner picks the grid
    launcher_extras: Callable[[Case], tuple] = lambda case: ()  # extra launcher arguments after the kernel's
    launch_rule: Callable[[Case, list], str | None] | None = None  # learner's launches -> complaint or None
    exact: bool = False  # integers: compare exactly
    rtol: float = 1e-5
    atol: float = 1e-6
    budgets: tuple[Budget, ...] = ()
    summary: str = ""  # appended to the success line, e.g. "2 global reads and 1 write per element"
    hint: str = ""  # shown under wrong values
    unwritten_hint: str = ("Does your grid cover every element, and does your guard let every valid index "
                           "through?")
    error_hints: dict[str, str] = field(default_factory=dict)  # KernelError type name -> extra hint

    def with_seeds(self, seeds: Sequence[int]) -> Task:
        """The same sizes with other seeds (hidden tests use this)."""
        return replace(self, cases=make_cases([case.params for case in self.cases], seeds))


# ------------------------------------------------------------------------------------------------ untrusted


class _RecordingKernel:
    """Wraps a gpusim launchable: records each launch configuration and sums the report counters."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.launches: list[list] = []
        self.totals: dict[str, int] = {}

    def __getitem__(self, config):
        config = config if isinstance(config, tuple) and len(config) in (2, 3, 4) else None
        if config is None:
            raise TypeError("launch a kernel as kernel[grid, block](...) or "
                            "kernel[grid, block, 0, shared_bytes](...)")
        grid, block = _dims(config[0]), _dims(config[1])
        shared = int(config[3]) if len(config) == 4 else 0
        self.launches.append([list(grid), list(block), shared])
        if min(grid) < 1 or min(block) < 1:
            raise LaunchError("a dimension of the grid or of the block is 0, but every dimension needs at "
                              "least 1. Round the number of blocks up with cdiv(n, threads_per_block).")
        launch = self._kernel[config]

        def call(*args):
            launch(*args)
            for name, value in self.kernel_report().items():
                if isinstance(value, (int, np.integer)):
                    self.totals[name] = self.totals.get(name, 0) + int(value)

        return call

    def kernel_report(self) -> dict:
        report = getattr(self._kernel, "report", None)
        return report.as_dict() if report is not None else {}


class LaunchError(Exception):
    """A launch configuration the machinery refuses before it reaches gpusim (an empty grid)."""


def _dims(value) -> tuple[int, int, int]:
    """Grid or block dimensions as (x, y, z) from an int, a tuple or a dim3."""
    values = tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else (int(value),)
    return (values + (1, 1, 1))[:3]


def _error(exc: BaseException) -> dict[str, str]:
    """A plain description of an exception; NotImplementedError in its chain means an unsolved stub."""
    chain, current = [], exc
    while current is not None and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    if any(isinstance(e, NotImplementedError) for e in chain) or NOT_IMPLEMENTED in str(exc):
        return {"type": NOT_IMPLEMENTED, "message": str(exc)}
    return {"type": type(exc).__name__, "message": str(exc)}


def run(task: Task, learner: dict[str, Callable], case: Case) -> dict:
    """Run the learner's code on one case. Returns plain data only: outputs, report counters, launches, error.

    ``learner`` maps "kernel" to the learner's kernel and, for tasks where the learner picks the grid,
    "launch" to the learner's launch function ``launch(kernel, *kernel_args, *extras)``.
    """
    args = task.make_args(case)
    for output in task.outputs:
        args[output.name][...] = 0 if output.fill is None else output.fill
    recorder = None
    error = None
    try:
        kernel = gpusim.jit(learner["kernel"], check=True, timeout=KERNEL_TIMEOUT_S)
        recorder = _RecordingKernel(kernel)
        if task.configure is None:
            learner["launch"](recorder, *args.values(), *task.launcher_extras(case))
        else:
            recorder[task.configure(case)](*args.values())
    except Exception as exc:  # noqa: BLE001 (every learner mistake becomes a message)
        error = _error(exc)
    return {
        "outputs": {output.name: np.array(args[output.name], copy=True) for output in task.outputs},
        "report": dict(recorder.totals) if recorder else {},
        "launches": list(recorder.launches) if recorder else [],
        "error": error,
    }


# -------------------------------------------------------------------------------------------------- trusted


def _describe_launch(launch) -> str:
    grid, block, shared = launch

    def shape(dims, unit):
        used = list(dims[: max(i + 1 for i, d in enumerate(dims) if d != 1 or i == 0)])
        count = math.prod(used)
        text = "×".join(str(d) for d in used)
        return f"{text} {unit}{'s' if count != 1 else ''}"

    text = f"grid of {shape(grid, 'block')} of {shape(block, 'thread')}"
    return text + (f", {shared} bytes of dynamic shared memory" if shared else "")


def _where(case: Case, result: dict) -> str:
    launches = result.get("launches") or []
    if not launches:
        return case.label()
    return case.label() + "; " + "; then ".join(_describe_launch(launch) for launch in launches[:3])


def _fmt(value) -> str:
    if isinstance(value, (float, np.floating)):
        return "NaN" if np.isnan(value) else f"{float(value):.6g}"
    return str(value)


def _index(flat: int, shape: tuple[int, ...]) -> str:
    return str(flat) if len(shape) == 1 else ", ".join(str(int(i)) for i in np.unravel_index(flat, shape))


def _compare(task: Task, name: str, expected: np.ndarray, got: np.ndarray, fill) -> list[str]:
    """Sentences describing wrong and never-written elements of one output (empty when all are right)."""
    if got.shape != expected.shape:
        return [f"`{name}` has shape {got.shape}, but should have shape {expected.shape}."]
    exp, act = expected.reshape(-1), got.reshape(-1)
    if fill is None:
        unwritten = np.zeros(act.shape, dtype=bool)
    elif isinstance(fill, float) and math.isnan(fill):
        unwritten = np.isnan(act) & ~np.isnan(exp)
    else:
        unwritten = (act == fill) & (exp != fill)
    if task.exact:
        wrong = (act != exp) & ~unwritten
    else:
        wrong = ~np.isclose(act.astype(np.float64), exp, rtol=task.rtol, atol=task.atol) & ~unwritten
    lines = []
    if wrong.any():
        shown = ", ".join(f"[{_index(i, got.shape)}] expected {_fmt(exp[i])}, got {_fmt(act[i])}"
                          for i in np.flatnonzero(wrong)[:MAX_SHOWN])
        rule = "exactly" if task.exact else f"|got - expected| <= {task.atol:g} + {task.rtol:g}·|expected|"
        lines.append(f"{int(wrong.sum())} of {exp.size} elements of `{name}` are wrong ({rule}). "
                     f"First: {shown}.")
    if unwritten.any():
        shown = ", ".join(f"[{_index(i, got.shape)}]" for i in np.flatnonzero(unwritten)[:MAX_SHOWN])
        still = "NaN" if isinstance(fill, float) else repr(fill)
        lines.append(
            f"{int(unwritten.sum())} of {exp.size} elements of `{name}` still hold {still}, the value the "
            f"check put there before the launch: they were never written (or were computed from a value "
            f"that was never written). First: {shown}."
        )
    return lines


def judge(task: Task, case: Case, result: dict) -> str | None:
    """The learner-facing message for one case's result, or None when it passes. Never runs learner code."""
    where = _where(case, result)
    error = result.get("error")
    if error:
        kind, message = error["type"], error["message"]
        if kind == NOT_IMPLEMENTED:
            return (f"{task.name}: not implemented yet. Replace `raise NotImplementedError()` in the "
                    f"solution cell with your code, run that cell, then run this check again.")
        if kind in ("LaunchError",):
            return f"{task.name} was launched wrongly for {where}: {message}"
        hint = task.error_hints.get(kind, GENERIC_ERROR_HINTS.get(kind, ""))
        is_kernel_error = hasattr(gpusim, kind) and isinstance(getattr(gpusim, kind), type) \
            and issubclass(getattr(gpusim, kind), gpusim.KernelError)
        what = "gpusim stopped the kernel" if is_kernel_error else "your code raised an exception"
        text = f"{task.name} failed for {where}: {what}, {kind}:\n{message}"
        return text + (f"\nIn this exercise: {hint}" if hint else "")
    if task.configure is None and not result.get("launches"):
        return (f"{task.name}: {task.launcher} never launched the kernel for {case.label()}. "
                f"Call kernel[grid, block](...) in it.")
    if task.launch_rule is not None:
        complaint = task.launch_rule(case, result["launches"])
        if complaint:
            return f"{task.name}: {task.launcher} launched the kernel wrongly for {where}: {complaint}"
    expected = task.reference(case, task.make_args(case))
    lines = []
    for output in task.outputs:
        got = np.asarray(result["outputs"].get(output.name))
        lines += _compare(task, output.name, np.asarray(expected[output.name]), got, output.fill)
    if lines:
        hints = []
        if any("wrong" in line for line in lines) and task.hint:
            hints.append(task.hint)
        if any("never written" in line for line in lines) and task.unwritten_hint:
            hints.append(task.unwritten_hint)
        text = f"{task.name} gives wrong results for {where}:\n" + "\n".join(f"- {line}" for line in lines)
        return text + "".join(f"\nHint: {hint}" for hint in hints)
    report = result.get("report") or {}
    for budget in task.budgets:
        used, limit = report.get(budget.counter), budget.limit(case.params)
        if used is None:
            return f"{task.name}: the check could not read `{budget.counter}` from gpusim's report."
        if used > limit:
            text = (f"{task.name} computes the right values for {where}, but it made {used} {budget.what}; "
                    f"the budget is {limit} ({budget.rule}).")
            return text + (f"\nHint: {budget.hint}" if budget.hint else "")
    return None


def _size_range(cases: Sequence[Case]) -> str:
    ranges = []
    for name, _ in cases[0].sizes:
        values = [case.params[name] for case in cases]
        ranges.append(f"{name}={min(values)}..{max(values)}")
    return ", ".join(ranges)


MAX_DRAWN = 1024  # outputs larger than this are described in words only


def wrong_output_view(task: Task, case: Case, result: dict):
    """A picture of the first wrong output next to the expected one, never-written elements crossed out
    (a gpusim.viz view), or None when the result has no wrong values to draw or is too large."""
    if result.get("error"):
        return None
    from gpusim import viz

    expected = task.reference(case, task.make_args(case))
    for output in task.outputs:
        got, want = np.asarray(result["outputs"][output.name]), np.asarray(expected[output.name])
        if got.shape != want.shape or got.size > MAX_DRAWN or got.ndim > 2:
            continue
        if output.fill is None:
            written = None
        elif isinstance(output.fill, float) and math.isnan(output.fill):
            written = ~np.isnan(got) | np.isnan(want)
        else:
            written = got != output.fill
        right = (got == want) if task.exact else np.isclose(got.astype(np.float64), want,
                                                             rtol=task.rtol, atol=task.atol)
        if not right.all():
            return viz.output_diff(got, want, written, name=output.name, rtol=task.rtol, atol=task.atol)
    return None


def _show(view) -> None:
    """Display a figure when running inside Jupyter; elsewhere (tests, graders, scripts) do nothing."""
    shell = sys.modules.get("IPython")
    if view is not None and shell is not None and shell.get_ipython() is not None:
        from IPython.display import display

        display(view)


def check(task: Task, learner: dict[str, Callable], *, quiet: bool = False) -> None:
    """Run and judge every case; raise CheckFailed on the first failure (in a notebook, with a picture of a
    wrong output), else print one success line."""
    for case in task.cases:
        result = run(task, learner, case)
        message = judge(task, case, result)
        if message:
            _show(wrong_output_view(task, case, result))
            raise CheckFailed(message)
    if not quiet:
        print(_success_line(task))


def _success_line(task: Task) -> str:
    seeds = ", ".join(str(seed) for seed in sorted({case.seed for case in task.cases}))
    line = f"✓ {task.name}: {len(task.cases)} cases passed ({_size_range(task.cases)}; seeds {seeds})"
    return line + (f", {task.summary}." if task.summary else ".")


# ------------------------------------------------------------------------------ plain-Python exercises

def run_function(task: Task, function: Callable, case: Case, call: Callable) -> dict:
    """``common.run`` for a plain-Python task: ``call(function, args)`` returns the outputs, in task order.

    Returns the same plain dict as ``common.run`` (no launches, no report), so ``common.judge`` can compare.
    """
    args = task.make_args(case)
    outputs, error = {}, None
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # the message says it instead
            returned = call(function, args)
        returned = returned if len(task.outputs) > 1 else (returned,)
        if not isinstance(returned, tuple) or len(returned) != len(task.outputs):
            raise TypeError(f"{task.name} should return {len(task.outputs)} values "
                            f"({', '.join(o.name for o in task.outputs)}), not {type(returned).__name__}")
        for output, value in zip(task.outputs, returned, strict=True):
            if value is None:
                raise TypeError(f"{task.name} returned None for `{output.name}`: did you forget `return`?")
            outputs[output.name] = np.array(value, dtype=np.float64, copy=True)
    except Exception as exc:  # noqa: BLE001 (every learner mistake becomes a message)
        error = _error(exc)
    for output in task.outputs:
        outputs.setdefault(output.name, np.full(0, np.nan))
    return {"outputs": outputs, "report": {}, "launches": [], "error": error}


def check_function(task: Task, function: Callable, call: Callable, extra: Callable | None = None,
                   quiet: bool = False) -> None:
    """``common.check`` for a plain-Python task. ``extra(case, function)`` may return a further message."""
    if not callable(function):
        raise CheckFailed(f"{task.name}: pass your function itself, not {type(function).__name__}.")
    for case in task.cases:
        message = judge(task, case, run_function(task, function, case, call))
        if message is None and extra is not None:
            message = extra(case, function)
        if message:
            raise CheckFailed(message)
    if not quiet:
        print(_success_line(task))

