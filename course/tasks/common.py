"""The checking machinery behind the exercise notebooks.

A :class:`Task` describes one graded exercise: the cases it is checked on, how to build the inputs of a case,
how to launch the learner's kernel, the float64 (or exact) reference, the tolerance and the budgets on
:class:`gpusim.Report` counters. Checking is split in two halves that share only plain data, so that a grader
can run the first in an untrusted process and the second in a trusted one:

* :func:`run` executes the learner's kernel for one case under ``gpusim`` (with all checks on) and returns a
  plain dict: the output arrays, the combined report counters, the launch configurations and the error, if
  any. The kernel goes through :mod:`course.kernelsource` (rebuilt from its source, as a grader rebuilds it
  in a process of its own) and :mod:`course.compilegate` (Numba's real CUDA compiler must accept it) first.
  Where the learner writes the launch function, :func:`plan_launches` calls it with a recorder instead of a
  kernel, and :func:`run` replays the plan: the launch function only chooses launches, it never runs one.
* :func:`judge` rebuilds the case's inputs itself, computes the reference and returns ``None`` or a message a
  learner can act on. It never calls learner code.

:func:`check` runs every case, raises :class:`CheckFailed` with the message of the first failure and prints
one success line otherwise.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import gpusim
from gpusim import place_name, schedule_difference

from . import cliffs
from .chunks import ChunkedReader

if TYPE_CHECKING:
    from .contract import Contract

MAX_SHOWN = 5  # wrong or unwritten elements listed in a message
KERNEL_TIMEOUT_S = 10.0  # an endless loop in a kernel fails the check instead of hanging the notebook
# Checks run gpusim strict: two threads that store into one element, or one that stores while another reads
# it, with nothing to order them, are a race even when the value stored is the one the element held. That
# coincidence (zeros into zeros) is what small cases are made of, and the bug is there all the same.
STRICT = True
NOT_IMPLEMENTED = "NotImplementedError"
MAX_LAUNCHES = 16  # launches one case may make
NAN_FILL = "nan"  # Output.fill: a NaN with its own bit pattern, told apart from a NaN the kernel computes
_FILL_BITS = {np.dtype(np.float32): np.uint32(0x7FC5A5A5), np.dtype(np.float16): np.uint16(0x7E5A),
              np.dtype(np.float64): np.uint64(0x7FF8A5A5A5A5A5A5)}


GENERIC_ERROR_HINTS = {
    "KernelTimeoutError": f"The check stops a launch after {KERNEL_TIMEOUT_S:g} s, and these inputs need "
                          f"well under a second: look for a loop whose variable never changes.",
}
READ_ONLY_HINT = ("The inputs are read-only: they belong to the caller, who may use them again. Leave them "
                  "as they are: make new arrays for results and scratch (np.empty_like(x)), or work on a "
                  "copy (x.copy()).")
NAN_HINT = ("NaN comes from 0/0, inf - inf, 0·inf or a NaN input; inf from an overflow (float32 exp() "
            "overflows above about 88.7) or a division by 0.")


class CheckFailed(AssertionError):
    """A check cell's failure: the message says what failed, for which case, and what to try."""


# ----------------------------------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Case:
    """One input configuration: named sizes (e.g. ``n=7`` or ``m, k, n``), a random seed and, for a task with
    a contract, the family its input values come from."""

    sizes: tuple[tuple[str, int], ...]
    seed: int
    inputs: str = ""  # a contract's input family ("" where the task has one way to make inputs)

    @property
    def params(self) -> dict[str, int]:
        return dict(self.sizes)

    def label(self) -> str:
        text = ", ".join(f"{name}={value}" for name, value in self.sizes) + f", seed={self.seed}"
        return text + (f", inputs={self.inputs}" if self.inputs else "")


def make_cases(sizes: Sequence[dict[str, int]], seeds: Sequence[int] = (0, 1, 2)) -> tuple[Case, ...]:
    """One case per size, cycling through the seeds (so every seed is used once there are enough sizes)."""
    return tuple(Case(tuple(size.items()), seeds[index % len(seeds)]) for index, size in enumerate(sizes))


@dataclass(frozen=True)
class Output:
    """A kernel argument the check reads back.

    ``fill`` is written into it before every launch: ``NAN_FILL`` (a NaN with a bit pattern no computation
    produces) or another sentinel exposes elements the kernel never wrote; ``None`` means the kernel
    accumulates into it (atomics), so it starts at zero.
    """

    name: str
    fill: float | int | str | None = NAN_FILL


def fill_output(array: np.ndarray, fill) -> None:
    """Write an Output's fill into its array before a launch."""
    if fill is None:
        array[...] = 0
    elif fill == NAN_FILL and array.dtype in _FILL_BITS:
        array.view(_FILL_BITS[array.dtype].dtype)[...] = _FILL_BITS[array.dtype]
    else:
        array[...] = math.nan if fill == NAN_FILL else fill


def freeze_inputs(task, args: dict) -> None:
    """Mark every array argument that is not an output read-only (NumPy's writeable flag): a kernel that
    writes one is stopped by gpusim at the thread and line (Numba refuses to compile it, too), and a
    plain-Python function that changes one in place raises NumPy's ValueError. The caller keeps its
    inputs."""
    outputs = {output.name for output in task.outputs}
    for name, value in args.items():
        if isinstance(value, np.ndarray) and name not in outputs:
            value.flags.writeable = False


def never_written(output: Output, values: np.ndarray) -> np.ndarray:
    """Where ``values`` still hold the fill the check wrote before the launch (all False when it has none)."""
    values = np.asarray(values)
    if output.fill is None:
        return np.zeros(values.shape, dtype=bool)
    if output.fill == NAN_FILL:
        bits = _FILL_BITS.get(values.dtype)
        return values.view(bits.dtype) == bits if bits is not None else np.isnan(values)
    if isinstance(output.fill, float) and math.isnan(output.fill):
        return np.isnan(values)
    return values == output.fill


@dataclass(frozen=True)
class Budget:
    """A limit on one gpusim Report counter, summed (or, for the busiest thread and block, maxed) over the
    case's launches: an upper limit on global reads for a halo stencil, or, with ``at_least``, a floor such
    as the dynamic shared memory a kernel must use."""

    counter: str  # a field of gpusim.Report: global_loads, max_thread_accesses, dynamic_shared_bytes, ...
    limit: Callable[[dict[str, int]], int]  # case sizes -> the most (or, at_least, the least) allowed
    what: str  # words for the counter: "global reads"
    rule: str  # how the limit is made up: "one per element plus 2*RADIUS halo elements per block"
    hint: str = ""
    at_least: bool = False


Diagnosis = Callable[["Task", Case, dict, dict], "str | None"]
"""(task, case, result, facts) -> a targeted explanation of a failure, or None. ``facts`` holds, for wrong
values, ``expected`` (output name -> reference values) and ``args`` (the case's inputs); for a budget,
``counter``, ``used``, ``reference`` (the reference's profile) and ``profile`` (the learner's counters)."""


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
    image: Callable[[Case], tuple[int, int]] | None = None  # a flat output that is a picture: its shape
    nan_hint: str = ""  # shown, after the general one, when the kernel produced NaN or infinity
    hidden_sizes: tuple[dict[str, int], ...] = ()  # sizes only the hidden tests use
    schedules: Callable[[Case], bool] | None = None  # cases to run again under gpusim's other schedules
    # Plain-Python tasks: (input, the argument that bounds one read) for each input handed out a chunk at a
    # time (a ChunkedReader), and the judge of the rows read per input, read by read.
    chunked: tuple[tuple[str, str], ...] = ()
    reads_rule: Callable[[Case, dict[str, list[int]]], str | None] | None = None
    # --- tasks with a contract (course.tasks.contract): cases, limits and precision derive from it
    contract: Contract | None = None
    scale: Callable[[Case, dict[str, Any]], dict[str, np.ndarray]] | None = None  # output -> magnitude
    scale_words: str = ""  # what `scale` is, e.g. "(|a| @ |b|)": the tolerance is atol + rtol·scale
    more_hints: tuple[str, ...] = ()  # hint levels 2, 3, ...: `tasks.hint(name, 2)` prints the first
    diagnoses: tuple[Diagnosis, ...] = ()  # targeted explanations, tried in order on a failure

    def with_seeds(self, seeds: Sequence[int]) -> Task:
        """The hidden tests' task: other seeds and the hidden sizes (with a contract: its hidden examples,
        and the cases these seeds draw)."""
        if self.contract is not None:
            return replace(self, cases=self.contract.cases(tuple(seeds), hidden=True))
        sizes = [case.params for case in self.cases] + list(self.hidden_sizes)
        return replace(self, cases=make_cases(sizes, seeds))


# ------------------------------------------------------------------------------------------------ untrusted


class _RecordingKernel:
    """Wraps a gpusim kernel: records each launch configuration and combines the launches' counters."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.launches: list[list] = []
        self.totals: dict[str, int] = {}

    def __getitem__(self, config):
        grid, block, shared = _config(config)
        self.launches.append([list(grid), list(block), shared])
        if len(self.launches) > MAX_LAUNCHES:
            raise LaunchError(f"more than {MAX_LAUNCHES} launches for one case; the exercise needs one.")
        launch = self._kernel[config]

        def call(*args):
            launch(*args)
            gpusim.report.combine(self.totals, self.kernel_report())

        return call

    def kernel_report(self) -> dict:
        report = getattr(self._kernel, "report", None)
        return report.as_dict() if report is not None else {}


class UntestedSizeError(Exception):
    """The learner's code treats sizes past every checked case differently (see :mod:`.cliffs`)."""


def refuse_size_cliffs(task: Task, found: list) -> None:
    """Raise UntestedSizeError naming the lines of `found` (cliffs.cliffs_in_*), if there are any."""
    if not found:
        return
    lines = "\n".join(f"    {gpusim.describe_line(filename, line)}: the constant {value}"
                      for filename, line, value, _ in found)
    raise UntestedSizeError(
        f"the code holds a constant larger than every size this check runs (the largest is "
        f"{cliffs.largest_size(task)}), where it compares, loops or clamps:\n{lines}\nWhat it does past "
        f"that constant is never tested, so the check refuses it: a large input would meet code no case "
        f"has run.")


class LaunchError(Exception):
    """A launch configuration the machinery refuses before it reaches gpusim (an empty grid)."""


def _config(config) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
    """(grid, block, dynamic shared bytes) of ``k[grid, block]`` or ``k[grid, block, 0, nbytes]``."""
    if not (isinstance(config, tuple) and len(config) in (2, 3, 4)):
        raise LaunchError("launch a kernel as kernel[grid, block](...) or "
                          "kernel[grid, block, 0, shared_bytes](...)")
    shared = config[3] if len(config) == 4 else 0
    if isinstance(shared, bool) or not isinstance(shared, (int, np.integer)):
        raise LaunchError(f"the 4th launch parameter is a number of bytes (an int), not {shared!r}.")
    grid, block = _dims(config[0]), _dims(config[1])
    if min(grid) < 1 or min(block) < 1:
        raise LaunchError(f"grid {grid} of blocks {block}: a dimension is 0, but every dimension needs at "
                          f"least 1. Round the number of blocks up with cdiv(n, threads_per_block).")
    return grid, block, int(shared)


def _dims(value) -> tuple[int, int, int]:
    """Grid or block dimensions as (x, y, z) from an int, a tuple or a dim3."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    whole = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values)
    if not 1 <= len(values) <= 3 or not whole:
        raise LaunchError(f"a grid or block is an int or a tuple of 1 to 3 ints, not {value!r}: compute "
                          f"sizes with cdiv(...) or //, not /.")
    return (tuple(int(v) for v in values) + (1, 1, 1))[:3]


def _error(exc: BaseException) -> dict[str, str]:
    """A plain description of an exception; NotImplementedError in its chain means an unsolved stub."""
    chain, current = [], exc
    while current is not None and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    if any(isinstance(e, NotImplementedError) for e in chain) or NOT_IMPLEMENTED in str(exc):
        return {"type": NOT_IMPLEMENTED, "message": str(exc)}
    return {"type": type(exc).__name__, "message": str(exc)}


class _Planner:
    """Stands in for the kernel while the learner's launch function runs: records what it would launch."""

    def __init__(self, args: dict[str, Any]):
        self._names = {id(value): name for name, value in args.items() if isinstance(value, np.ndarray)}
        self.launches: list[dict] = []

    def __getitem__(self, config):
        grid, block, shared = _config(config)
        if len(self.launches) >= MAX_LAUNCHES:
            raise LaunchError(f"more than {MAX_LAUNCHES} launches for one case; the exercise needs one.")

        def call(*args):
            self.launches.append({"grid": list(grid), "block": list(block), "shared": shared,
                                  "args": [self._argument(position, value) for position, value in
                                           enumerate(args)]})

        return call

    def _argument(self, position: int, value) -> dict:
        if id(value) in self._names:
            return {"arg": self._names[id(value)]}
        if isinstance(value, (bool, np.bool_)):
            raise LaunchError(f"argument {position + 1} of the launch is a bool; pass numbers or the arrays "
                              f"the launch function received.")
        if isinstance(value, (int, float, np.integer, np.floating)):
            kind = np.asarray(value).dtype.name if isinstance(value, np.generic) else type(value).__name__
            return {"value": value.item() if isinstance(value, np.generic) else value, "type": kind}
        raise LaunchError(f"argument {position + 1} of the launch is {type(value).__name__}, not one of the "
                          f"arrays the launch function received: pass those arrays themselves (no copies, "
                          f"views or new arrays), or numbers.")


def plan_launches(task: Task, launcher: Callable, case: Case) -> dict:
    """The launches the learner's launch function makes for one case, as plain data (see :func:`run`):
    ``{"launches": [{"grid", "block", "shared", "args": [{"arg": name} | {"value", "type"}]}], "error"}``."""
    args = task.make_args(case)
    for output in task.outputs:
        fill_output(args[output.name], output.fill)
    planner = _Planner(args)
    try:
        launcher(planner, *args.values(), *task.launcher_extras(case))
    except Exception as exc:  # noqa: BLE001 (every learner mistake becomes a message)
        return {"launches": planner.launches, "error": _error(exc)}
    return {"launches": planner.launches, "error": None}


_SCALAR_TYPES = {"int": int, "float": float, "int32": np.int32, "int64": np.int64, "float32": np.float32,
                 "float64": np.float64}


def _replay_args(plan_args: list[dict], args: dict[str, Any]) -> list:
    values = []
    for item in plan_args:
        if "arg" in item:
            values.append(args[item["arg"]])
        else:
            values.append(_SCALAR_TYPES[item["type"]](item["value"]))
    return values


_REBUILT: dict[int, tuple[dict, Callable]] = {}  # id(spec) -> (spec, its kernel): the cases of one check
MAX_REBUILT = 8


def _rebuilt(spec: dict) -> Callable:
    """The kernel a spec describes, rebuilt once for all the cases a check runs with that spec (so that gpusim
    prepares it once too)."""
    from course import kernelsource

    found = _REBUILT.get(id(spec))
    if found is None or found[0] is not spec:
        found = (spec, kernelsource.rebuild(spec))
        _REBUILT[id(spec)] = found
        while len(_REBUILT) > MAX_REBUILT:
            del _REBUILT[next(iter(_REBUILT))]
    return found[1]


def _spec(kernel) -> dict:
    """A kernel's spec (course.kernelsource), or the spec itself."""
    from course.kernelsource import describe

    return kernel if isinstance(kernel, dict) else describe(kernel)


def _described(learner: dict) -> dict:
    """The learner's objects with the kernel described once for every case of a check (a kernel that cannot
    be described stays as it is: each case then reports why)."""
    from course.kernelsource import KernelSourceError, describe

    if isinstance(learner.get("kernel"), dict):
        return learner
    try:
        return {**learner, "kernel": describe(learner["kernel"])}
    except KernelSourceError:
        return learner


def _gated_kernel(learner_kernel, arguments: list[list], arithmetic: str | None = None):
    """The learner's kernel rebuilt from its source, after Numba's CUDA compiler accepted it for the
    argument types of each launch (skipped, and the result says so, where the compiler is not installed).
    With ``arithmetic="float32"`` the compiled code must hold no float64 arithmetic either."""
    from course import compilegate, kernelsource

    spec = learner_kernel if isinstance(learner_kernel, dict) else kernelsource.describe(learner_kernel)
    kernel = _rebuilt(spec)
    code = kernel.__code__
    for values in arguments:
        if len(values) != code.co_argcount:
            names = ", ".join(code.co_varnames[:code.co_argcount])
            raise LaunchError(f"kernel {code.co_name} takes {code.co_argcount} arguments ({names}), but the "
                              f"launch passes {len(values)}.")
    available, _ = compilegate.available()
    if available:
        for values in arguments:
            compilegate.compile_kernel(spec, compilegate.signature_of(values), arithmetic=arithmetic)
    return kernel, available


def run(task: Task, learner: dict, case: Case, gate: bool = True) -> dict:
    """Run the learner's kernel on one case. Returns plain data only: outputs, report counters, launches,
    whether Numba's compiler checked the kernel, and the error.

    ``learner["kernel"]`` is the learner's kernel, or its :func:`course.kernelsource.describe` spec (the
    grader's route). Tasks whose learner picks the launch also give ``learner["launch"]``, the learner's
    launch function, or ``learner["launches"]``, the plan :func:`plan_launches` made of it. ``gate=False``
    runs the kernel as it is, without the compile gate: only for the course's own reference solutions.
    """
    args = task.make_args(case)
    for output in task.outputs:
        fill_output(args[output.name], output.fill)
    freeze_inputs(task, args)
    recorder, error, compiled = None, None, None
    try:
        if task.configure is None:
            plan = learner.get("launches") or plan_launches(task, learner["launch"], case)
            if plan["error"]:
                return _result(task, args, None, plan["error"], None, plan["launches"])
            launches = [(tuple(p["grid"]), tuple(p["block"]), 0, p["shared"]) for p in plan["launches"]]
            arguments = [_replay_args(p["args"], args) for p in plan["launches"]]
        else:
            launches, arguments = [task.configure(case)], [list(args.values())]
        if gate:
            arithmetic = task.contract.arithmetic if task.contract is not None else None
            kernel, compiled = _gated_kernel(learner["kernel"], arguments, arithmetic)
            largest = cliffs.largest_size(task)
            refuse_size_cliffs(task, cliffs.cliffs_in_spec(_spec(learner["kernel"]), largest))
        else:
            kernel = learner["kernel"]
        recorder = _RecordingKernel(gpusim.jit(kernel, check=True, timeout=KERNEL_TIMEOUT_S, strict=STRICT))
        with warnings.catch_warnings():  # an overflow is the judge's to report ("produced infinity"), once
            warnings.simplefilter("ignore", RuntimeWarning)
            for config, values in zip(launches, arguments, strict=True):
                recorder[config](*values)
        if task.schedules is not None and task.schedules(case):
            error = run_under_schedules(task, case, kernel, launches, arguments, args)
    except Exception as exc:  # noqa: BLE001 (every learner mistake becomes a message)
        error = _error(exc)
    return _result(task, args, recorder, error, compiled)


SCHEDULE_RANDOMS = 1  # random schedules run after the adversarial ones, for tasks with `schedules`


def run_under_schedules(task: Task, case: Case, kernel, launches: list, arguments: list, args: dict):
    """For a task whose results depend on the order threads run (flags, fences, atomics, warp collectives):
    the case's launches again, each time from fresh inputs, under every schedule of ``gpusim.schedules``
    but the default one, which :func:`run` has just run (leaving its outputs in ``args``). Returns the
    error of the first schedule that shows one, its message naming the schedule, or a ScheduleError where
    a schedule leaves outputs that differ from the default's; None when every schedule agrees."""
    block = max((_dims(config[1]) for config in launches), key=math.prod)
    names = [output.name for output in task.outputs]
    default = [np.array(args[name], copy=True) for name in names]
    tolerance = (0.0, 0.0) if task.exact else (task.rtol, task.atol)
    for schedule in gpusim.schedules(block, randoms=SCHEDULE_RANDOMS)[1:]:
        fresh = task.make_args(case)
        for output in task.outputs:
            fill_output(fresh[output.name], output.fill)
        freeze_inputs(task, fresh)
        swap = {id(value): fresh[name] for name, value in args.items()}
        kernel_now = gpusim.jit(kernel, check=True, timeout=KERNEL_TIMEOUT_S, schedule=schedule,
                                strict=STRICT)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                for config, values in zip(launches, arguments, strict=True):
                    kernel_now[config](*(swap.get(id(value), value) for value in values))
        except gpusim.KernelError as exc:
            return _error(exc.under(schedule))
        difference = schedule_difference(schedule, names, default, [fresh[name] for name in names],
                                         *tolerance)
        if difference is not None:
            return _error(difference)
    return None


def _result(task: Task, args: dict, recorder, error, compiled, planned=None) -> dict:
    launches = list(recorder.launches) if recorder else [[p["grid"], p["block"], p["shared"]]
                                                          for p in planned or []]
    return {
        "outputs": {output.name: np.array(args[output.name], copy=True) for output in task.outputs},
        "report": dict(recorder.totals) if recorder else {},
        "launches": launches,
        "compiled": compiled,
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


def _tolerance(task: Task, case: Case, args: dict) -> dict[str, np.ndarray] | None:
    """Per output, the magnitude the relative tolerance applies to: `task.scale` where the task has one (the
    sizes of the terms of a sum, so that cancellation is not blamed on the kernel), else None (|expected|)."""
    return None if task.scale is None else task.scale(case, args)


def _close(task: Task, got: np.ndarray, expected: np.ndarray, scale: np.ndarray | None) -> np.ndarray:
    """Where ``got`` agrees with ``expected`` within the task's tolerance."""
    got = got.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if scale is None:
            return np.isclose(got, expected, rtol=task.rtol, atol=task.atol)
        return np.abs(got - expected) <= task.atol + task.rtol * np.asarray(scale, np.float64)


def _compare(task: Task, output: Output, expected: np.ndarray, got: np.ndarray, subject: str,
             scale: np.ndarray | None = None) -> list[str]:
    """Sentences describing wrong, non-finite and never-written elements of one output (empty when right);
    `subject` is "your kernel" or "your code"."""
    name = output.name
    if got.shape != expected.shape:
        return [f"`{name}` has shape {got.shape}, but should have shape {expected.shape}."]
    exp, act = expected.reshape(-1), got.reshape(-1)
    unwritten = never_written(output, got).reshape(-1)
    if output.fill not in (None, NAN_FILL):
        unwritten &= exp != output.fill  # an expected value equal to the sentinel is not "never written"
    if task.exact:
        wrong = (act != exp) & ~unwritten
        produced = np.zeros_like(wrong)
    else:
        produced = ~np.isfinite(act.astype(np.float64)) & np.isfinite(exp) & ~unwritten
        close = _close(task, act, exp, None if scale is None else np.asarray(scale).reshape(-1))
        wrong = ~close & ~unwritten & ~produced
    lines = []
    if produced.any():
        shown = ", ".join(f"{_fmt(act[i])} at [{_index(i, got.shape)}] (expected {_fmt(exp[i])})"
                          for i in np.flatnonzero(produced)[:MAX_SHOWN])
        lines.append(f"{subject} produced NaN or infinity in {int(produced.sum())} of {exp.size} elements "
                     f"of `{name}`, where the right values are finite: {shown}.")
    if wrong.any():
        shown = ", ".join(f"[{_index(i, got.shape)}] expected {_fmt(exp[i])}, got {_fmt(act[i])}"
                          for i in np.flatnonzero(wrong)[:MAX_SHOWN])
        relative = task.scale_words if scale is not None else "|expected|"
        rule = "exactly" if task.exact else f"|got - expected| <= {task.atol:g} + {task.rtol:g}·{relative}"
        lines.append(f"{int(wrong.sum())} of {exp.size} elements of `{name}` are wrong ({rule}). "
                     f"First: {shown}.")
    if unwritten.any():
        shown = ", ".join(f"[{_index(i, got.shape)}]" for i in np.flatnonzero(unwritten)[:MAX_SHOWN])
        still = "the NaN" if output.fill == NAN_FILL else repr(output.fill)
        lines.append(
            f"{int(unwritten.sum())} of {exp.size} elements of `{name}` still hold {still} the check put "
            f"there before the launch: they were never written (or were computed from an element that was "
            f"never written). First: {shown}."
        )
    return lines


def _error_message(task: Task, where: str, error: dict) -> str:
    kind, message = error["type"], error["message"]
    if kind == NOT_IMPLEMENTED:
        return (f"{task.name}: not implemented yet. Replace `raise NotImplementedError()` in the "
                f"solution cell with your code, run that cell, then run this check again.")
    if kind == "LaunchError":
        return f"{task.name} was launched wrongly for {where}: {message}"
    if kind == "CompileError":
        return (f"{task.name}: Numba's CUDA compiler, which turns your kernel into GPU code, refuses it "
                f"({where}):\n{message}")
    if kind == "PrecisionError":
        return f"{task.name} computes in float64 where the task asks for float32 ({where}):\n{message}"
    if kind == "UntestedSizeError":
        return (f"{task.name} ({where}): {message}\nHandle every size with the same code: take sizes from "
                f"the arrays (a.size, a.shape) and loop bounds from them or from the block (cuda.blockDim).")
    if kind == "KernelSourceError":
        return f"{task.name}: the check cannot take your kernel as it is written: {message}"
    hint = task.error_hints.get(kind, GENERIC_ERROR_HINTS.get(kind, ""))
    if kind == "ValueError" and "read-only" in message and not hint:
        hint = READ_ONLY_HINT
    error_class = getattr(gpusim, kind, None)
    is_kernel_error = isinstance(error_class, type) and issubclass(error_class, gpusim.KernelError)
    what = "gpusim stopped the kernel" if is_kernel_error else "your code raised an exception"
    text = f"{task.name} failed for {where}: {what}, {kind}:\n{message}"
    return text + (f"\nIn this exercise: {hint}" if hint else "")


def _budget_message(task: Task, where: str, params: dict, report: dict) -> str | None:
    for budget in task.budgets:
        used, limit = report.get(budget.counter), budget.limit(params)
        if used is None:
            return f"{task.name}: the check could not read `{budget.counter}` from gpusim's report."
        if used < limit if budget.at_least else used > limit:
            bound = "the task asks for at least" if budget.at_least else "the budget is"
            text = (f"{task.name} computes the right values for {where}, but it used {used} {budget.what}; "
                    f"{bound} {limit} ({budget.rule}).")
            return text + (f"\nHint: {budget.hint}" if budget.hint else "")
    return None


# ------------------------------------------------------------------------------------------------ verdicts

@dataclass(frozen=True)
class Failure:
    """Why one case failed: ``kind`` ("error:RaceError", "launch", "values", "budget:global_sectors",
    "profile") tells two failures of the same sort apart from different ones; ``message`` is the learner's."""

    kind: str
    message: str


def hint_name(task: Task) -> str:
    """The name `tasks.hint(...)` knows a task by: its function's name (make_tiled_matmul for the factory's
    kernel at every width)."""
    return task.name.split("(", 1)[0]


def _more_help(task: Task) -> str:
    if not task.more_hints:
        return ""
    return f"\nMore help, step by step: tasks.hint({hint_name(task)!r}, 2)."


def _diagnosis(task: Task, case: Case, result: dict, facts: dict) -> str:
    """The first targeted explanation a task's diagnoses find, as a line of the message (or "")."""
    for diagnose in task.diagnoses:
        found = diagnose(task, case, result, facts)
        if found:
            return f"\nWhat it looks like: {found}"
    return ""


def _inputs_line(task: Task, case: Case) -> str:
    """What the case's family of input values holds, for a task with a contract."""
    family = next((f for f in task.contract.inputs if f.name == case.inputs), None) if task.contract else None
    return f"\nThe inputs ({family.name}): {family.about}." if family else ""


def _method_failure(task: Task, case: Case, where: str, result: dict) -> Failure | None:
    """The first counter of the contract's method outside its limits, against the reference's profile."""
    from .contract import Budgeted
    from .profiles import ProfileUnavailable, profile

    try:
        reference = profile(task, case)
    except ProfileUnavailable as why:
        return Failure("profile", f"{task.name} computes the right values for {where}, but the check cannot "
                                  f"measure its method here: {why}.")
    report = result.get("report") or {}
    for budget in task.contract.method:
        if not isinstance(budget, Budgeted):
            continue
        used = report.get(budget.counter)
        if used is None:
            return Failure(f"budget:{budget.counter}",
                           f"{task.name}: the check could not read `{budget.counter}` from gpusim's report.")
        low, high = budget.limits(reference, case.params)
        if high is not None and used > high:
            bound, slack = f"the budget is {high}", budget.most
        elif low is not None and used < low:
            bound, slack = f"the task asks for at least {low}", budget.least
        else:
            continue
        text = (f"{task.name} computes the right values for {where}, but it used {used} {budget.what}; "
                f"{bound}: {slack.describe()} (`{budget.counter}`, {reference[budget.counter]} here).")
        asked = budget.asked_for(case.params)
        text += f" The task asks for {asked}." if asked else ""
        facts = {"counter": budget.counter, "used": used, "reference": reference, "profile": report}
        text += _diagnosis(task, case, result, facts)
        text += f"\nHint: {budget.hint}" if budget.hint else ""
        return Failure(f"budget:{budget.counter}", text + _more_help(task))
    return None


def verdict(task: Task, case: Case, result: dict) -> Failure | None:
    """Why one case's result fails, or None when it passes. Never runs learner code."""
    where = _where(case, result)
    if result.get("error"):
        return Failure(f"error:{result['error']['type']}",
                       _error_message(task, where, result["error"]) + _more_help(task))
    if task.configure is None and not result.get("launches"):
        return Failure("launch", f"{task.name}: {task.launcher} never launched the kernel for "
                                 f"{case.label()}. Call kernel[grid, block](...) in it.")
    if task.launch_rule is not None:
        complaint = task.launch_rule(case, result["launches"])
        if complaint:
            return Failure("launch", f"{task.name}: {task.launcher} launched the kernel wrongly for {where}: "
                                     f"{complaint}")
    args = task.make_args(case)
    expected = task.reference(case, args)
    scales = _tolerance(task, case, args)
    lines = []
    subject = "your kernel" if result.get("launches") else "your code"
    for output in task.outputs:
        got = np.asarray(result["outputs"].get(output.name))
        scale = None if scales is None else scales[output.name]
        lines += _compare(task, output, np.asarray(expected[output.name]), got, subject, scale)
    if lines:
        hints = []
        if any("produced NaN" in line for line in lines):
            hints.append(NAN_HINT + (f" {task.nan_hint}" if task.nan_hint else ""))
        if any("are wrong" in line for line in lines) and task.hint:
            hints.append(task.hint)
        if any("never written" in line for line in lines) and task.unwritten_hint:
            hints.append(task.unwritten_hint)
        text = f"{task.name} gives wrong results for {where}:\n" + "\n".join(f"- {line}" for line in lines)
        shaped = all(np.shape(result["outputs"].get(output.name)) == np.shape(expected[output.name])
                     for output in task.outputs)
        text += _diagnosis(task, case, result, {"expected": expected, "args": args}) if shaped else ""
        text += _inputs_line(task, case)
        return Failure("values", text + "".join(f"\nHint: {hint}" for hint in hints) + _more_help(task))
    if task.contract is not None and task.contract.measured:
        failure = _method_failure(task, case, where, result)
        if failure is not None:
            return failure
    elif task.contract is None:
        message = _budget_message(task, where, case.params, result.get("report") or {})
        if message is not None:
            return Failure("budget", message)
    if task.reads_rule is not None:
        reads = {name: list(rows) for name, rows in (result.get("reads") or {}).items()}
        complaint = task.reads_rule(case, reads)
        return None if complaint is None else Failure("reads", complaint)
    return None


def judge(task: Task, case: Case, result: dict) -> str | None:
    """The learner-facing message for one case's result, or None when it passes. Never runs learner code."""
    failure = verdict(task, case, result)
    return None if failure is None else failure.message


def _size_range(cases: Sequence[Case]) -> str:
    ranges = []
    for name, _ in cases[0].sizes:
        values = [case.params[name] for case in cases]
        ranges.append(f"{name}={min(values)}..{max(values)}")
    return ", ".join(ranges)


MAX_DRAWN = 4096  # outputs larger than this are described in words only


def wrong_output_view(task: Task, case: Case, result: dict):
    """A picture of the first wrong output next to the expected one, never-written elements crossed out
    (a gpusim.viz view), or None when the result has no wrong values to draw or is too large."""
    if result.get("error"):
        return None
    from gpusim import viz

    args = task.make_args(case)
    expected = task.reference(case, args)
    scales = _tolerance(task, case, args)
    for output in task.outputs:
        got, want = np.asarray(result["outputs"][output.name]), np.asarray(expected[output.name])
        if got.shape != want.shape or got.size > MAX_DRAWN or got.ndim > 2:
            continue
        written = None if output.fill is None else ~never_written(output, got)
        right = (got == want) if task.exact else _close(task, got, want,
                                                        None if scales is None else scales[output.name])
        if not right.all():
            image = task.image(case) if task.image is not None else None
            return viz.output_diff(got, want, written, name=output.name, rtol=task.rtol, atol=task.atol,
                                   image=image)
    return None


def _show(view) -> None:
    """Display a figure when running inside Jupyter; elsewhere (tests, graders, scripts) do nothing."""
    shell = sys.modules.get("IPython")
    if view is not None and shell is not None and shell.get_ipython() is not None:
        from IPython.display import display

        display(view)


# -------------------------------------------------------------------------------------------- check cells

SHRINK_RUNS = 12  # at most this many extra runs to shrink a failing case
SHRINK_SECONDS = 4.0  # and no new run once this long has passed
NOT_SHRUNK = ("error:NotImplementedError", "error:CompileError", "error:PrecisionError",
              "error:KernelSourceError", "profile")  # failures no smaller case can explain better


def shrink(task: Task, learner: dict, case: Case, result: dict, failure: Failure):
    """The smallest case of the task's contract found to fail the same way as ``case`` (same kind of
    failure), by trying :meth:`Contract.simpler` cases greedily, within SHRINK_RUNS runs and SHRINK_SECONDS.
    Returns (case, result, failure, runs)."""
    runs, deadline = 0, time.monotonic() + SHRINK_SECONDS
    if task.contract is None or failure.kind in NOT_SHRUNK:
        return case, result, failure, runs
    improved = True
    while improved:
        improved = False
        for candidate in task.contract.simpler(case):
            if runs >= SHRINK_RUNS or time.monotonic() > deadline:
                return case, result, failure, runs
            runs += 1
            outcome = run(task, learner, candidate)
            found = verdict(task, candidate, outcome)
            if found is not None and found.kind == failure.kind:
                case, result, failure, improved = candidate, outcome, found, True
                break
    return case, result, failure, runs


def check(task: Task, learner: dict[str, Callable], *, quiet: bool = False) -> None:
    """Run and judge every case; raise CheckFailed on the first failure, shrunk to the smallest case found
    that fails the same way (in a notebook, with a picture of a wrong output), else print one success line."""
    for role, given in learner.items():
        refuse_course_code(given, f"{task.name} ({role})")
    learner = _described(learner)
    compiled = set()
    for first in task.cases:
        result = run(task, learner, first)
        compiled.add(result["compiled"])
        failure = verdict(task, first, result)
        if failure:
            case, result, failure, runs = shrink(task, learner, first, result, failure)
            _show(wrong_output_view(task, case, result))
            note = "" if case == first else (
                f"\n(It first failed on {first.label()}; of the {runs} smaller cases the check then tried, "
                f"the one above is the smallest that fails the same way.)")
            raise CheckFailed(failure.message + note)
    if not quiet:
        print(_success_line(task, compiled))


def _success_line(task: Task, compiled=frozenset()) -> str:
    seeds = ", ".join(str(seed) for seed in sorted({case.seed for case in task.cases}))
    line = f"✓ {task.name}: {len(task.cases)} cases passed ({_size_range(task.cases)}; seeds {seeds})"
    line += f", {task.summary}." if task.summary else "."
    if False in compiled:
        line += (" Not compiled: Numba's CUDA compiler (the nvidia-cuda-nvrtc and nvidia-nvvm packages) is "
                 "not installed here, so a kernel a GPU would refuse can still pass this check.")
    elif True in compiled:
        line += " Numba's CUDA compiler accepts the kernel."
    return line


def print_hint(tasks: Sequence[Task], name: str, level: int = 2) -> None:
    """Print hint ``level`` of the task called ``name`` (level 1 is the one failure messages show)."""
    task = next((task for task in tasks if hint_name(task) == name), None)
    if task is None:
        names = ", ".join(dict.fromkeys(hint_name(task) for task in tasks))
        print(f"No task called {name!r} here; the tasks are: {names}.")
        return
    levels = (task.hint, *task.more_hints)
    level = min(max(int(level), 1), len(levels))
    more = (f" (more: tasks.hint({name!r}, {level + 1}))" if level < len(levels) else "")
    print(f"{name}, hint {level} of {len(levels)}{more}:\n{levels[level - 1]}")


@contextmanager
def try_it():
    """For "Try it" cells of exercise notebooks: an unsolved stub or a bug prints one line saying what to do
    (and where, for a Python error), never a traceback."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 (a try-it cell reports, it never fails)
        if _error(exc)["type"] == NOT_IMPLEMENTED:
            print("Not written yet: replace `raise NotImplementedError()` in the cell above with your code, "
                  "run that cell, then run this one again.")
        elif isinstance(exc, gpusim.KernelError):
            print(f"{type(exc).__name__}: {exc}")
        else:
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if "site-packages" not in f.filename
                      and "/gpusim/" not in f.filename]
            where = f" (at {place_name(frames[-1].filename, frames[-1].lineno)})" if frames else ""
            print(f"{type(exc).__name__}{where}: {exc}")


# ------------------------------------------------------------------ the course's own code is not an answer

REPOSITORY = Path(__file__).resolve().parents[2]
# The checks, the models and the reference kernels (course/), the lesson's benchmark kernels (bench/), and the
# reference solutions as course.tasks.references loads them (solutions/).
COURSE_DIRS = (REPOSITORY / "course", REPOSITORY / "bench", REPOSITORY / "solutions")
# Course code a learner's function is given to call: the chunked readers of Parts 6 and 7, and Part 9's
# measure of a layout's causal work (shown in its "Try it" cell).
GIVEN_TO_LEARNERS = ("ChunkedReader.", "ChunkReadError.", "causal_work")
OWN_CODE_HINT = ("The exercise asks for your own code: write it in the solution cell, using the lesson's "
                 "ideas, not the course's model, reference or checker functions.")


KERNEL_PACKAGES = ("numba", "numba_cuda", "numba_cuda_mlir", "triton")


class CourseCodeError(CheckFailed):
    """A learner's function is, or calls, the course's own model, reference or checker code."""


@functools.lru_cache(maxsize=4096)
def _course_path(filename: str) -> str | None:
    """`filename` relative to the repository when it lies in course/ or bench/, else None. Names that are
    not paths (`<string>`, `<ipython-input-3>`, a dataclass's generated `__init__`) are never course code."""
    if not os.path.isabs(filename):
        return None
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError):
        return None
    if not any(path.is_relative_to(folder) for folder in COURSE_DIRS):
        return None
    return str(path.relative_to(REPOSITORY))


def _python_code(function):
    """The Python code object behind a function, a Numba dispatcher, a Triton kernel or a functools.partial
    (or None)."""
    for _ in range(6):
        code = getattr(function, "__code__", None)
        if code is not None:
            return code
        inner = next((getattr(function, name) for name in ("py_func", "fn", "__wrapped__", "__func__", "func")
                      if getattr(function, name, None) is not None), None)
        if inner is None or inner is function:
            return None
        function = inner
    return None


def grader_only(function: Callable) -> Callable:
    """Marks a function that makes a plain-Python task's inputs or its reference. In a notebook it is the
    function itself; the classroom grader's learner worker gets it without its body
    (:mod:`course.grade.staging`), so learner code there can neither call it, from any thread, nor rebuild
    the inputs it must read a chunk at a time."""
    return function


def refuse_course_code(function, name: str) -> None:
    """Raise CourseCodeError when the learner's answer is a function of the course itself (the model of
    Part 8, a reference kernel in course/kernels, a checker's helper), however it is wrapped."""
    code = _python_code(function)
    where = _course_path(code.co_filename) if code is not None else None
    if where is not None:
        raise CourseCodeError(f"{name}: the function you passed is `{code.co_name}` from {where}, the "
                              f"course's own code.\nHint: {OWN_CODE_HINT}")


def guard_learner(function: Callable, name: str) -> Callable:
    """``function`` wrapped so that a call into the course's model, reference or checker code from inside it
    raises CourseCodeError, naming the learner's line (the readers handed to the learner excepted). Kernels
    (Numba dispatchers, Triton kernels) are returned as they are: they are checked by where they come from."""
    if type(function).__module__.partition(".")[0] in KERNEL_PACKAGES:
        return function

    def guarded(*args, **kwargs):
        entered = []
        previous = sys.getprofile()
        if previous is not None and not callable(previous):
            raise CheckFailed(f"{name}: a profiler is running (`%prun` or cProfile); run the check without "
                              f"it, then profile your function on its own.")

        def watch(frame, event, arg):
            if previous is not None:
                previous(frame, event, arg)
            if event != "call" or entered:
                return
            where = _course_path(frame.f_code.co_filename)
            caller = frame.f_back  # course code called by course code (a reader helper) is not the learner's
            if (where is not None and not frame.f_code.co_qualname.startswith(GIVEN_TO_LEARNERS)
                    and (caller is None or _course_path(caller.f_code.co_filename) is None)):
                line = place_name(caller.f_code.co_filename, caller.f_lineno) if caller is not None else "?"
                entered.append(f"{name} calls `{frame.f_code.co_qualname}` from {where}, the course's own "
                               f"code, at {line}.\nHint: {OWN_CODE_HINT}")

        sys.setprofile(watch)
        try:
            value = function(*args, **kwargs)
        except Exception as exc:
            if entered:
                raise CourseCodeError(entered[0]) from exc
            raise
        finally:
            sys.setprofile(previous)
        if entered:
            raise CourseCodeError(entered[0])
        return value

    return guarded


# ------------------------------------------------------------------------------ plain-Python exercises

def run_function(task: Task, function: Callable, case: Case, call: Callable,
                 args: dict | None = None) -> dict:
    """``common.run`` for a plain-Python task: ``call(function, args)`` returns the outputs, in task order.

    ``args`` are the case's arguments (made here when None); the inputs named in ``task.chunked`` reach
    ``call`` as :class:`~.chunks.ChunkedReader` s. Returns the same plain dict as ``common.run`` (no
    launches, no report) plus the rows each chunked input handed out, read by read, so ``common.judge`` can
    compare.
    """
    args = task.make_args(case) if args is None else args
    freeze_inputs(task, args)
    readers = {name: ChunkedReader(args[name], args[limit], name, limit) for name, limit in task.chunked}
    outputs, error = {}, None
    try:
        refuse_course_code(function, task.name)
        refuse_size_cliffs(task, cliffs.cliffs_in_function(function, cliffs.largest_size(task)))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # the message says it instead
            returned = call(guard_learner(function, task.name), {**args, **readers})
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
    return {"outputs": outputs, "report": {}, "launches": [], "error": error,
            "reads": {name: list(reader.reads) for name, reader in readers.items()}}


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

