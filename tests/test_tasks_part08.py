"""The checks of exercise notebook 08, called directly: the reference solutions pass, the usual slips are
named, and the inputs carry the families of values that break shortcuts."""

import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from course.grade.recording import FUNCTION, KERNEL, planned_steps
from course.models import systolic
from course.tasks import part08
from course.tasks.common import CheckFailed, Output, Task, check, make_cases


def not_written(*args):
    raise NotImplementedError()


def learners_copy_of_the_model():
    """The model's source run as a learner's cell: right answers that are not the course's own code."""
    source = Path(systolic.__file__).read_text()
    module = types.ModuleType("learners_copy")
    exec(compile(source, "<a learner's cell>", "exec"), module.__dict__)
    return module


copy = learners_copy_of_the_model()


def test_the_models_clock_and_feed_pass_the_cycle_by_cycle_check(capsys):
    part08.check_systolic(copy.step, copy.feed)
    assert capsys.readouterr().out.startswith("✓ systolic_step and skewed_feed")


def test_the_model_itself_or_a_call_into_it_is_refused():
    with pytest.raises(CheckFailed, match="`feed` from course/models/systolic.py, the course's own code"):
        part08.check_systolic(copy.step, systolic.feed)
    with pytest.raises(CheckFailed, match="calls `step` from course/models/systolic.py"):
        part08.check_systolic(lambda w, a, s, x: systolic.step(w, a, s, x), copy.feed)
    with pytest.raises(CheckFailed, match="calls `cycle_count` from course/models/systolic.py"):
        part08.check_systolic_cycles(lambda m, k, n, r, c: systolic.cycle_count(m, k, n, r, c))
    with pytest.raises(CheckFailed, match="should return an integer count of cycles, not float"):
        part08.check_systolic_cycles(lambda m, k, n, r, c: float(copy.cycle_count(m, k, n, r, c)))


def test_an_unwritten_function_is_reported_as_such():
    with pytest.raises(CheckFailed, match="skewed_feed: not implemented yet"):
        part08.check_systolic(copy.step, not_written)
    with pytest.raises(CheckFailed, match="systolic_cycles: not implemented yet"):
        part08.check_systolic_cycles(not_written)


def test_a_step_that_returns_one_array_is_told_the_shape_of_the_answer():
    with pytest.raises(CheckFailed, match=r"should return the pair \(a_new, s_new\)"):
        part08.check_systolic(lambda weights, a, s, x: a, copy.feed)


def test_the_cycle_formula_passes_and_its_slips_are_named():
    part08.check_systolic_cycles(copy.cycle_count, seeds=(5, 6))
    slips = {
        "one cycle short": lambda m, k, n, r, c: copy.passes(k, n, r, c) * (m + r + c - 3),
        "one pass only": lambda m, k, n, r, c: m + r + c - 2,
        "passes counted with //": lambda m, k, n, r, c: (k // r) * (n // c) * (m + r + c - 2),
        "no fill and no drain": lambda m, k, n, r, c: copy.passes(k, n, r, c) * m,
    }
    for words, slip in slips.items():
        with pytest.raises(CheckFailed, match=words):
            part08.check_systolic_cycles(slip)


@pytest.mark.parametrize("k,budget", [(1, 2), (16, 2), (17, 3), (70, 6)])
def test_the_barrier_budget_is_one_per_tile_and_one_before_the_loop(k, budget):
    assert part08.barrier_budget(k) == budget


def test_every_ring_case_set_has_negative_rows_zeros_huge_values_and_a_late_maximum():
    for cases in (part08.RING_ROW_MAX.cases, part08.RING_ROW_MAX.with_seeds((7, 8, 9)).cases):
        rows = [row for case in cases if case.params["length"] > 3 for row in part08._ring_args(case)["x"]]
        assert any(row.max() < 0 for row in rows) and any((row == 0).any() for row in rows)
        assert any(np.abs(row).max() > 1e29 for row in rows)
        assert any(row.argmax() == len(row) - 1 for row in rows)
        assert any(case.params["length"] % part08.WARP for case in cases)


@pytest.mark.parametrize("function,names,kind,task", [
    ("check_systolic", 2, FUNCTION, part08.SYSTOLIC),
    ("check_systolic_cycles", 1, FUNCTION, part08.SYSTOLIC_CYCLES),
    ("check_double_buffered_matmul", 1, KERNEL, part08.DOUBLE_BUFFERED),
    ("check_ring_row_max", 1, KERNEL, part08.RING_ROW_MAX),
])
def test_the_classroom_grader_sees_every_task_through_its_hooks(function, names, kind, task):
    steps = planned_steps(part08, function, names, {})
    assert [(step.kind, step.task) for step in steps] == [(kind, task)]
    hidden = planned_steps(part08, function, names, {"seeds": (1, 2, 3)})
    assert list(hidden[0].task.cases) == list(task.with_seeds((1, 2, 3)).cases) != list(task.cases)


def test_the_model_is_refused_however_it_is_handed_in_and_the_call_names_the_learners_line():
    import functools

    from course.tasks.common import CourseCodeError, guard_learner, refuse_course_code

    with pytest.raises(CourseCodeError, match="`feed` from course/models/systolic.py"):
        refuse_course_code(functools.partial(systolic.feed), "skewed_feed")

    def calls_the_model(*args):
        return systolic.feed(*args)

    own_code = r"`feed` from course/models/systolic.py, the course.s own code, at test_tasks_part08.py:\d+"
    with pytest.raises(CourseCodeError, match=own_code):
        guard_learner(calls_the_model, "skewed_feed")(np.ones((2, 2), np.float32), 0, 2)


def test_the_ring_task_runs_the_cases_that_refill_its_slots_under_gpusims_other_schedules():
    task = part08.RING_ROW_MAX
    for cases in (task.cases, task.with_seeds((90, 91, 92)).cases):
        scheduled = [case for case in cases if task.schedules(case)]
        assert scheduled and len(scheduled) < len(cases)
        assert all(-(-case.params["length"] // part08.WARP) > part08.SLOTS for case in scheduled)


def test_the_contracts_draw_past_the_examples_and_every_family_of_values():
    matmul = part08.DOUBLE_BUFFERED
    assert max(c.params["k"] for c in matmul.cases) > max(k for _, k, _ in part08.MATMUL_SIZES)
    assert {c.inputs for c in matmul.cases} == {f.name for f in matmul.contract.inputs}
    ring = part08.RING_ROW_MAX
    assert max(c.params["length"] for c in ring.cases) > max(n for _, n in part08.RING_SIZES)
    maxima = np.concatenate([part08._ring_args(c)["x"].max(axis=1) for c in ring.cases])
    assert maxima.min() < -1e30, "a row whose values all lie far below any constant a maximum might start at"
    for task in (part08.SYSTOLIC, part08.SYSTOLIC_CYCLES):
        assert {c.inputs for c in task.cases} == {f.name for f in task.contract.inputs}
    assert max(c.params["m"] for c in part08.SYSTOLIC_CYCLES.cases) > 4096


@cuda.jit
def last_lane_wins(out):
    cuda.atomic.exch(out, 0, cuda.threadIdx.x)


def test_a_result_only_the_default_schedule_gives_fails_a_task_that_runs_the_schedules():
    task = Task(name="last_lane_wins", cases=make_cases([{"n": 1}], seeds=(0,)),
                make_args=lambda case: {"out": np.zeros(1, np.int32)}, outputs=(Output("out", fill=-1),),
                reference=lambda case, args: {"out": np.array([63])}, configure=lambda case: (1, 64),
                exact=True)
    check(task, {"kernel": last_lane_wins}, quiet=True)
    with pytest.raises(CheckFailed) as info:
        check(replace(task, schedules=lambda case: True), {"kernel": last_lane_wins})
    message = str(info.value)
    assert "gpusim stopped the kernel, ScheduleError:\nunder the schedule 'delay warp 1" in message
    assert "out[0] is 31 there and 63 under the default schedule" in message


def test_the_cycle_hint_points_first_and_derives_on_request(capsys):
    part08.hint("systolic_cycles", 1)
    nudge = capsys.readouterr().out
    part08.hint("systolic_cycles", 2)
    derivation = capsys.readouterr().out
    assert "M + R + C - 2" in derivation and "M + R + C - 2" not in nudge and "cdiv" not in nudge
    part08.hint("systolic_step", 2)
    assert "s_new[i, j] = s[i - 1, j] + weights[i, j] * a_new[i, j]" in capsys.readouterr().out
    part08.hint("no_such_task")
    assert "systolic_cycles" in capsys.readouterr().out
