"""Fast checks of the part 4 and 5 checkers: their cases expose the shortcuts they are meant to (shapes,
inputs, block sizes), their budgets and hints say what the task asks, and the grader sees every Task a check
runs. The kernels themselves, right and wrong, are covered by test_exercises.py."""

import os
import re

os.environ.setdefault("COURSE_MODE", "cpu")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import utils  # noqa: E402, F401  (picks the simulator before numba is imported)
from course.grade.recording import planned_steps  # noqa: E402
from course.tasks import common, part04, part05, profiles  # noqa: E402

MATMUL_TASKS = (part05.TILED_MATMUL, part05.TILED_MATMUL_DYNAMIC,
                part05.factory_task(8), part05.factory_task(16))


def _all_cases(task):
    return task.with_seeds((5, 6, 7)).cases


def _width(task, case):
    """The tile width of a case: its t, the factory's T (in the task's name) or the static TILE."""
    factory = re.fullmatch(r"make_tiled_matmul\((\d+)\)", task.name)
    return case.params.get("t", int(factory.group(1)) if factory else part05.TILE)


def _judge(task, case, report, error=None):
    """The message for a result whose values are right and whose counters are `report`."""
    args = task.make_args(case)
    expected = task.reference(case, args)
    outputs = {o.name: np.asarray(expected[o.name]).astype(args[o.name].dtype) for o in task.outputs}
    result = {"outputs": outputs, "report": report, "launches": [[[1, 1, 1], [16, 16, 1], 0]], "error": error}
    return common.judge(task, case, result)


# ------------------------------------------------------------------------------------------------ part 04

@pytest.mark.parametrize("task", (part04.ADD_BIAS, part04.SIGMOID3_BACKWARD), ids=lambda t: t.name)
def test_one_dimensional_kernels_are_launched_with_two_block_sizes(task):
    assert len({case.params["threads"] for case in task.cases}) >= 2
    assert len({case.params["threads"] for case in _all_cases(task)}) >= 4
    for case in task.cases:
        blocks, threads = task.configure(case)
        elements = case.params.get("n") or case.params["rows"] * case.params["cols"]
        assert threads == case.params["threads"] and (blocks - 1) * threads < elements <= blocks * threads


@pytest.mark.parametrize("task", (part04.ADD_BIAS, part04.TRANSPOSE), ids=lambda t: t.name)
def test_matrices_are_taller_and_wider_and_past_twice_64(task):
    shapes = [(case.params["rows"], case.params["cols"]) for case in task.cases]
    assert any(r > c > 1 for r, c in shapes) and any(c > r > 1 for r, c in shapes)
    assert (1, 1) in shapes
    assert task.contract.hidden_examples, "the hidden tests add shapes of their own"
    if task is part04.ADD_BIAS:
        assert max(c for _, c in shapes) > 128 and max(r for r, _ in shapes) > 128


def test_transpose_grids_have_more_blocks_along_one_axis_than_the_other():
    grids = [part04.TRANSPOSE.configure(case)[0] for case in part04.TRANSPOSE.cases]
    assert any(x > y for x, y in grids) and any(y > x for x, y in grids)
    first = part04.TRANSPOSE.cases[0].params
    assert first["rows"] != first["cols"], "the first case is not square"


def test_sigmoid_inputs_hold_values_where_exp_overflows():
    for case in part04.SIGMOID3_BACKWARD.cases:
        x = part04.SIGMOID3_BACKWARD.make_args(case)["x"]
        assert x.dtype == np.float32
        if case.inputs == "extremes":
            assert abs(float(x[-1])) in {abs(float(np.float32(v))) for v in part04.EXTREME_X}
        if case.inputs == "wide" and x.size > 100:
            assert np.abs(x).max() > 1e30 and 0 < np.abs(x[x != 0]).min() < 1e-20
    big = part04.sigmoid_inputs(100, 3)
    assert (big > 709).any() and (big < -709).any(), "exp overflows even in float64 on both sides"
    assert np.array_equal(big, part04.sigmoid_inputs(100, 3))
    assert not np.array_equal(big, part04.sigmoid_inputs(100, 4))


def test_sigmoid_reference_is_finite_and_quiet_at_extremes():
    x = np.array(part04.EXTREME_X, np.float32)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        dx = part04.sigmoid3_backward_reference(x, np.ones_like(x))
    assert np.isfinite(dx).all()
    assert abs(dx[-1] - 0.25 * 0.6225 * (1 - 0.6225) * 0.6508 * (1 - 0.6508)) < 1e-4  # x = 0


def test_naive_derivative_is_reported_as_a_nan_the_kernel_produced():
    task = part04.SIGMOID3_BACKWARD
    case = task.cases[0]
    args = task.make_args(case)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-args["x"].astype(np.float64))
        naive = args["dout"] * e / (1 + e) ** 2  # sigma'(x) written with exp: inf / inf where x << 0
    result = {"outputs": {"dx": naive.astype(np.float32)}, "report": {},
              "launches": [[[2, 1, 1], [64, 1, 1], 0]], "error": None}
    message = common.judge(task, case, result)
    assert "your kernel produced NaN or infinity" in message and "overflow" in message


@pytest.mark.parametrize("task, report, words", [
    (part04.ADD_BIAS, {"active_threads": 20}, "20 threads that touched memory; the task asks for at least"),
    (part04.SIGMOID3_BACKWARD, {"active_threads": 100, "global_loads": 200, "global_stores": 100,
                                "max_thread_accesses": 9}, "9 element accesses in its busiest thread"),
    (part04.TRANSPOSE, {"active_threads": 10**6, "global_loads": 0, "global_stores": 0,
                        "max_thread_accesses": 66}, "66 element accesses in its busiest thread; the budget"),
])
def test_one_element_per_thread_budgets_name_the_counter_and_the_rule(task, report, words):
    message = _judge(task, task.cases[0], report)
    assert words in message and ("one element per thread" in message or "one thread per element" in message)
    assert "no loop" in message.lower() or "No loops" in message


def test_write_conflicts_get_an_index_hint_not_a_barrier_hint():
    for task in (part04.ADD_BIAS, part04.TRANSPOSE, part04.SIGMOID3_BACKWARD, *MATMUL_TASKS):
        hint = task.error_hints["WriteConflictError"]
        assert "syncthreads" not in hint and ("check the ind" in hint or "row" in hint)


# ------------------------------------------------------------------------------------------------ part 05

@pytest.mark.parametrize("task", MATMUL_TASKS, ids=lambda t: t.name)
def test_matmul_shapes_make_every_loop_bound_matter(task):
    cases = task.cases[: len(task.contract.examples)]  # the hand-picked ones; the drawn ones add to them
    sizes = [(c.params["m"], c.params["k"], c.params["n"], _width(task, c)) for c in cases]
    first_m, first_k, first_n, first_t = sizes[0]
    assert min(first_m, first_k, first_n) > 1 and first_m % first_t and first_k % first_t, \
        "the first case is an ordinary uneven one, so a wrong index shows as wrong values"
    for dim in range(3):
        assert any(s[dim] > max(s[j] for j in range(3) if j != dim) for s in sizes), f"{dim}: the largest"
    widths = {t for *_, t in sizes}
    for t in widths:
        assert any(-(-k // t) > max(-(-m // t), -(-n // t)) for m, k, n, w in sizes if w == t), \
            f"a tile loop that runs to M or N must miss steps at width {t}"
    assert any(s[:3] == (1, 1, 1) for s in sizes)
    assert any(k > 128 for _, k, _, _ in sizes), "K past twice a hard-coded 64"
    assert any(s[dim] == t + 1 for s in sizes for t in widths for dim in range(3)), "a size just past a tile"
    assert task.contract.hidden_examples


def test_dynamic_kernel_is_checked_at_two_widths_drawn_ones_and_hidden_tests_add_one():
    task = part05.TILED_MATMUL_DYNAMIC
    explicit = {c.params["t"] for c in task.cases[: len(task.contract.examples)]}
    visible = {c.params["t"] for c in task.cases}
    hidden = {c.params["t"] for c in _all_cases(task)}
    assert explicit == set(part05.WIDTHS) and visible - explicit, "drawn widths on top"
    assert part05.HIDDEN_WIDTH in hidden - visible
    assert task.cases[0].params["t"] == min(part05.WIDTHS)


def test_matmul_inputs_hold_a_zero_row_and_a_zero_column():
    a, b = part05.matmul_inputs(17, 20, 9, 1)
    assert (a == 0).all(axis=1).sum() == 1 and (b == 0).all(axis=0).sum() == 1
    c = a.astype(np.float64) @ b
    assert (c == 0).all(axis=1).any() and (c == 0).all(axis=0).any()
    assert a.dtype == b.dtype == np.float32 and np.abs(a).max() <= 1


def test_budget_arithmetic():
    assert part05.tiled_read_budget(32, 32, 32, 16) == 2 * 32 ** 3 // 16
    assert part05.tiled_read_budget(17, 20, 9, 16) == 1 * 17 * 20 + 2 * 20 * 9
    assert part05.thread_access_budget(20, 16) == 2 * 36 + 1
    assert part05.thread_access_budget(1, 8) == 21


def _right_report(task, case, **changes):
    """The reference solution's counters on this case, some of them changed."""
    return {**profiles.profile(task, case), **changes}


@pytest.mark.parametrize("task", MATMUL_TASKS, ids=lambda t: t.name)
def test_a_tiled_kernel_within_every_budget_passes(task):
    for case in task.cases[:3]:
        assert _judge(task, case, _right_report(task, case)) is None


@pytest.mark.parametrize("task, changes, words", [
    (part05.TILED_MATMUL, {"static_shared_bytes": 0},
     "0 bytes of static shared memory per block; the task asks for at least 2048"),
    (part05.TILED_MATMUL, {"static_shared_bytes": 8192}, "the budget is 2176"),
    (part05.TILED_MATMUL_DYNAMIC, {"static_shared_bytes": 2048}, "none: both tiles live in the dynamic"),
    (part05.factory_task(8), {"static_shared_bytes": 2048}, "with the factory's T, not a fixed 16"),
    (part05.factory_task(8), {"max_block_barriers": 27}, "27 barrier steps in its busiest block; the budget"),
    (part05.TILED_MATMUL, {"max_thread_accesses": 1589}, "1589 element accesses in its busiest thread"),
])
def test_method_budgets_say_which_failed_and_what_the_task_asks(task, changes, words):
    case = task.cases[0]
    message = _judge(task, case, _right_report(task, case, **changes))
    assert message and words in message and "computes the right values" in message and "Hint:" in message


def test_dynamic_shared_memory_overflow_points_at_t_not_at_the_launch():
    task, case = part05.TILED_MATMUL_DYNAMIC, part05.TILED_MATMUL_DYNAMIC.cases[0]
    error = {"type": "OutOfBoundsError",
             "message": "block (0,0,0), thread (0,0,0) wrote shared[256]: past the end of the 512 bytes of "
                        "dynamic shared memory the launch gave."}
    message = common.judge(task, case, {"outputs": {}, "report": {}, "error": error,
                                        "launches": [[[2, 3, 1], [8, 8, 1], 512]]})
    assert "512 bytes of dynamic shared memory" in message  # what the check launched with
    assert "from the argument t, never from TILE" in message


def test_factory_hints_point_at_T():
    task = part05.factory_task(8)
    assert "factory's T" in task.hint and "factory's T" in task.unwritten_hint
    assert "factory's T" in task.error_hints["OutOfBoundsError"]


def test_the_grader_sees_every_width_the_factory_check_runs():
    visible = planned_steps(part05, "check_make_tiled_matmul", 1, {})
    hidden = planned_steps(part05, "check_make_tiled_matmul", 1, {"seeds": (91, 92)})
    assert [s.task.name for s in visible] == ["make_tiled_matmul(8)", "make_tiled_matmul(16)"]
    drawn = hidden[-1].task
    width = int(drawn.name.strip(")").split("(")[1])
    assert [s.task.name for s in hidden] == ["make_tiled_matmul(8)", "make_tiled_matmul(16)",
                                             f"make_tiled_matmul({part05.HIDDEN_WIDTH})",
                                             f"make_tiled_matmul({width})"]
    assert 1 <= width <= part05.MAX_WIDTH and width not in (8, 16, part05.HIDDEN_WIDTH)
    assert len(hidden[0].task.cases) == len(part05.FACTORY_HIDDEN_SIZES) + part05.FACTORY_DRAWN
    assert len(drawn.cases) == part05.FACTORY_DRAWN, "at a drawn width, drawn cases only"


def test_factory_check_refuses_what_is_not_a_factory():
    with pytest.raises(common.CheckFailed, match="a function that takes the tile width"):
        part05.check_make_tiled_matmul(42)
    with pytest.raises(common.CheckFailed, match=r"make_tiled_matmul\(8\) returned None"):
        part05.check_make_tiled_matmul(lambda width: None)
