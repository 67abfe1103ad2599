"""Which Tasks a check function runs, found by calling it with its two checking hooks replaced.

Every ``check_<name>`` function in :mod:`course.tasks` builds one or more Tasks and hands each to
``check(task, learner)`` (kernels) or ``check_function(task, function, call, extra)`` (plain-Python
exercises), both looked up in the part module's namespace. Replacing those two names lets the trusted
grader list the Tasks without running anything (:func:`planned_steps`, with stand-ins for the learner's
objects), and lets the worker run the untrusted half of each Task and collect plain results instead of
judging them.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from types import ModuleType

from course.tasks.common import Task

HOOKS = ("check", "check_function")
KERNEL, FUNCTION = "kernel", "function"


@dataclass(frozen=True)
class Step:
    """One Task a check function hands over: ``kind`` says which hook received it."""

    kind: str  # KERNEL (common.check) or FUNCTION (common.check_function)
    task: Task


class StandIn:
    """Takes the place of a learner's object while a check is listed; calling it (a kernel factory) gives
    another stand-in."""

    def __call__(self, *args, **kwargs) -> StandIn:
        return StandIn()


@contextmanager
def hooks_replaced(module: ModuleType, on_kernel: Callable, on_function: Callable) -> Iterator[None]:
    """Within the block, ``module.check(task, learner)`` calls ``on_kernel(task, learner)`` and
    ``module.check_function(task, function, call, extra)`` calls ``on_function`` with the same arguments."""
    saved = {name: vars(module)[name] for name in HOOKS if name in vars(module)}

    def check(task, learner, quiet=False):
        on_kernel(task, learner)

    def check_function(task, function, call, extra=None, quiet=False):
        on_function(task, function, call, extra)

    module.check, module.check_function = check, check_function
    try:
        yield
    finally:
        for name in HOOKS:
            if name in saved:
                setattr(module, name, saved[name])
            else:
                delattr(module, name)


def planned_steps(module: ModuleType, function_name: str, arg_count: int, keywords: dict) -> tuple[Step, ...]:
    """The Tasks ``module.<function_name>(<arg_count learner objects>, **keywords)`` would check, in order."""
    steps: list[Step] = []
    with hooks_replaced(module, lambda task, learner: steps.append(Step(KERNEL, task)),
                        lambda task, function, call, extra: steps.append(Step(FUNCTION, task))), \
            redirect_stdout(io.StringIO()):  # a check's success line, printed with stand-ins
        getattr(module, function_name)(*(StandIn() for _ in range(arg_count)), **keywords)
    return tuple(steps)
