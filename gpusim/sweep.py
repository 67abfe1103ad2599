"""Run one launch under a set of schedules (gpusim.schedules) and report the first one that shows a bug."""

import numpy as np

from .arguments import host_array
from .errors import KernelError, ScheduleError
from .launch import jit, parse_config
from .rebind import python_function
from .schedule import schedules

MAX_SHOWN = 3  # differing elements named in a ScheduleError


def run_schedules(kernel, config, *args, randoms=3, seed=0, rtol=0.0, atol=0.0, **options):
    """Launch `kernel[config](*args)` under every schedule of `gpusim.schedules(block, randoms, seed)`, the
    default one first, each from the arguments as they were before the first launch. `options` go to
    `gpusim.jit` (check, timeout, ...).

    The first KernelError stops the sweep and is raised again, of the same class, with the schedule that
    showed it in the first line of its message. If every schedule runs clean but one leaves an array argument
    different from what the default schedule left (beyond `rtol` and `atol`), ScheduleError says which array,
    where and under which schedule. The arrays end holding the default schedule's results; returns the
    schedules run."""
    _, block, _ = parse_config(config)
    named = [(name, array) for name, array in zip(_array_names(kernel, args),
                                                   (a for a in map(host_array, args) if a is not None),
                                                   strict=True)
             if array.flags.writeable]  # a read-only argument cannot change (a write to it is an error)
    names, arrays = [name for name, _ in named], [array for _, array in named]
    start = [array.copy() for array in arrays]
    ran, default, difference = [], None, None
    for schedule in schedules(tuple(block), randoms, seed):
        for array, values in zip(arrays, start, strict=True):
            np.copyto(array, values)
        try:
            jit(kernel, schedule=schedule, **options)[config](*args)
        except KernelError as error:
            raise error.under(schedule) from error.__cause__
        ran.append(schedule)
        if default is None:
            default = [array.copy() for array in arrays]
        elif difference is None:
            difference = compare(schedule, names, default, arrays, rtol, atol)
    for array, values in zip(arrays, default, strict=True):
        np.copyto(array, values)
    if difference is not None:
        raise difference
    return ran


def _array_names(kernel, args):
    """The kernel's parameter names of the array arguments, in order."""
    code = python_function(kernel).__code__
    names = code.co_varnames[: code.co_argcount]
    return [name for name, value in zip(names, args, strict=False) if host_array(value) is not None]


def compare(schedule, names, default, arrays, rtol=0.0, atol=0.0):
    """ScheduleError for the first of the arrays (named `names`) that `schedule` left different from what
    the default schedule left (`default`, beyond rtol and atol for floats), or None."""
    for name, want, got in zip(names, default, arrays, strict=True):
        with np.errstate(invalid="ignore", over="ignore"):
            same = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True) if got.dtype.kind in "fc" \
                else got == want
        if same.all():
            continue
        wrong = np.argwhere(~same)[:MAX_SHOWN]
        shown = ", ".join(f"{name}[{', '.join(map(str, index))}] is {got[tuple(index)]} there and "
                          f"{want[tuple(index)]} under the default schedule" for index in wrong)
        return ScheduleError(
            f"under the schedule {schedule.name!r} ({schedule.meaning}), the launch left "
            f"{int((~same).sum())} elements of {name} different from the default schedule's, and no check "
            f"found a race: {shown}."
        )
    return None
