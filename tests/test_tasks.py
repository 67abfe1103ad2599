"""Unit tests of the exercise checkers (gpusim.tasks): cases, messages, NaN poisoning, budgets, the run/judge
split. In-process and fast; the notebooks and their wrong-solution fixtures are covered by
test_exercises.py."""

import json
import os

os.environ.setdefault("COURSE_MODE", "cpu")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import utils  # noqa: E402  (picks the simulator before numba is imported)
from gpusim import tasks  # noqa: E402
from gpusim.tasks import common, part01, part02, part03  # noqa: E402

cuda = utils.cuda

ALL_TASKS = part01.TASKS + part02.TASKS + part03.TASKS
BLOCK = {"vector_add": 32, "grayscale": 16, "matmul": 16, "block_sum": 32, "window_sum": 32, "block_scan": 32,
         "histogram": 64, "warp_sum": 32, "dot": 32}


# ---------------------------------------------------------------------------------------------- the cases

@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.name)
def test_cases_cover_uneven_and_tiny_sizes(task):
    block = BLOCK[task.name]
    sizes = [max(case.params.values()) if task.name != "dot" else case.params["n"] for case in task.cases]
    assert any(min(case.params.values()) == 1 for case in task.cases), "a case with a single element"
    assert any(1 < size < block for size in sizes), "a case smaller than one block"
    assert any(size > block and size % block for size in sizes), "a case that does not divide into blocks"
    assert len({case.seed for case in task.cases}) >= 3, "several seeds"
    assert len(task.cases) >= 5


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.name)
def test_inputs_are_reproducible_and_references_are_float64_or_exact(task):
    for case in task.cases[:3]:
        first, second = task.make_args(case), task.make_args(case)
        for name in set(first) - {output.name for output in task.outputs}:
            np.testing.assert_array_equal(first[name], second[name])
        expected = task.reference(case, first)
        for output in task.outputs:
            dtype = np.asarray(expected[output.name]).dtype
            assert dtype == np.float64 or (task.exact and dtype.kind == "i")


def test_seeds_change_the_inputs_but_not_the_sizes():
    other = part01.VECTOR_ADD.with_seeds((7, 8))
    assert [c.params for c in other.cases] == [c.params for c in part01.VECTOR_ADD.cases]
    assert {c.seed for c in other.cases} == {7, 8}
    a0 = part01.VECTOR_ADD.make_args(part01.VECTOR_ADD.cases[3])["a"]
    a1 = other.make_args(other.cases[3])["a"]
    assert not np.array_equal(a0, a1)


def test_case_label():
    assert common.Case((("m", 3), ("n", 5)), 2).label() == "m=3, n=5, seed=2"


# ------------------------------------------------------------------------- judge (pure, no learner code)

def _result(task, case, outputs, report=None, launches=None, error=None):
    if launches is None:
        launches = [[[common.math.ceil(case.params.get("n", 1) / 32), 1, 1], [32, 1, 1], 0]]
    return {"outputs": outputs, "report": report or {}, "launches": launches, "error": error}


def _vector_case(n, seed=1):
    return common.Case((("n", n),), seed)


def _correct_vector_add(case):
    args = part01.VECTOR_ADD.make_args(case)
    return (args["a"] + args["b"]).astype(np.float32)


def test_judge_passes_correct_output_within_budget():
    case = _vector_case(33)
    report = {"global_loads": 66, "global_stores": 33}
    result = _result(part01.VECTOR_ADD, case, {"out": _correct_vector_add(case)}, report)
    assert common.judge(part01.VECTOR_ADD, case, result) is None


def test_judge_reports_unwritten_nan_elements():
    case = _vector_case(33)
    out = _correct_vector_add(case)
    common.fill_output(out[32:], common.NAN_FILL)
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {"out": out}))
    assert message.startswith("vector_add gives wrong results for n=33, seed=1; grid of 2 blocks of 32 thr")
    assert "1 of 33 elements of `out` still hold the NaN the check put there" in message
    assert "never written" in message and "[32]" in message and "Hint:" in message
    assert "produced NaN" not in message


def test_judge_tells_a_computed_nan_from_a_never_written_element():
    case = _vector_case(33)
    out = _correct_vector_add(case)
    out[5], out[7] = np.nan, np.inf
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {"out": out}))
    assert "your kernel produced NaN or infinity in 2 of 33 elements of `out`" in message
    assert "nan at [5]" in message.lower() and "inf at [7]" in message and "never written" not in message
    assert "overflow" in message


def test_judge_lists_first_wrong_elements_with_expected_and_got():
    case = _vector_case(100, seed=2)
    out = _correct_vector_add(case)
    out[[3, 50, 51, 52, 60, 61, 99]] += 1.0
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {"out": out}))
    assert "7 of 100 elements of `out` are wrong" in message
    assert "[3] expected " in message and ", got " in message
    assert "[60]" in message and "[61]" not in message  # first five only
    assert "|got - expected| <=" in message


def test_judge_names_indices_of_2d_outputs():
    task = part01.MATMUL
    case = common.Case((("m", 3), ("k", 2), ("n", 4)), 0)
    args = task.make_args(case)
    c = (args["a"] @ args["b"]).astype(np.float32)
    c[2, 1] = 5.0
    message = common.judge(task, case, _result(task, case, {"c": c}))
    assert "[2, 1] expected" in message and "got 5" in message


def test_judge_enforces_budgets():
    case = _vector_case(33)
    report = {"global_loads": 3 * 33, "global_stores": 33}
    message = common.judge(part01.VECTOR_ADD, case,
                           _result(part01.VECTOR_ADD, case, {"out": _correct_vector_add(case)}, report))
    assert "computes the right values" in message and "99 global reads" in message
    assert "the budget is 66" in message


def test_stencil_budget_counts_the_halo():
    assert part02._stencil_read_budget({"n": 100}) == 100 + 4 * 4
    assert part02._stencil_read_budget({"n": 1}) == 1 + 4


def test_judge_passes_gpusim_errors_through_with_a_hint():
    case = _vector_case(7)
    error = {"type": "OutOfBoundsError", "message": "block (0,0,0) thread (7,0,0) wrote out[7], line 4"}
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {"out": np.zeros(7)},
                                                            error=error))
    assert "n=7, seed=1" in message and "OutOfBoundsError" in message
    assert "thread (7,0,0) wrote out[7], line 4" in message and "if i < out.size" in message


def test_judge_explains_unsolved_stubs():
    case = _vector_case(7)
    error = {"type": "NotImplementedError", "message": ""}
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {}, error=error))
    assert "not implemented yet" in message and "raise NotImplementedError()" in message


def test_judge_rejects_a_launcher_that_never_launches():
    task, case = part01.GRAYSCALE, part01.GRAYSCALE.cases[2]
    message = common.judge(task, case, _result(task, case, {"gray": np.zeros(1)}, launches=[]))
    assert "launch_grayscale never launched the kernel" in message


def test_dot_launch_rule_wants_the_requested_block_size():
    task = part03.DOT
    case = next(c for c in task.cases if c.params["threads"] == 128)
    launches = [[[5, 1, 1], [64, 1, 1], 256]]
    message = common.judge(task, case, _result(task, case, {"out": np.zeros(1)}, launches=launches))
    assert "asks for blocks of `threads` = 128" in message


def test_exact_comparison_for_integer_outputs():
    task = part03.HISTOGRAM
    case = task.cases[4]
    counts = task.reference(case, task.make_args(case))["counts"].astype(np.int32)
    assert common.judge(task, case, _result(task, case, {"counts": counts},
                                            {"global_atomics": 0})) is None
    counts[0] -= 1
    message = common.judge(task, case, _result(task, case, {"counts": counts}))
    assert "exactly" in message and "1 of 16 elements of `counts` are wrong" in message


def test_shape_mismatch_is_reported():
    case = _vector_case(7)
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {"out": np.zeros(8)}))
    assert "shape (8,)" in message


# ---------------------------------------------------------------------- run and check, under gpusim

@cuda.jit
def good_vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def unguarded_vector_add(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]


@cuda.jit
def forgets_the_last_element(a, b, out):
    i = cuda.grid(1)
    if i < out.size - 1:
        out[i] = a[i] + b[i]


@cuda.jit
def stub(a, b, out):
    raise NotImplementedError()


def test_run_returns_plain_data_only():
    result = common.run(part01.VECTOR_ADD, {"kernel": good_vector_add}, _vector_case(33))
    assert set(result) == {"outputs", "report", "launches", "compiled", "error"}
    assert result["compiled"] is True and result["error"] is None
    assert isinstance(result["outputs"]["out"], np.ndarray) and result["error"] is None
    json.dumps({k: v for k, v in result.items() if k != "outputs"})  # the rest crosses a process boundary
    assert result["launches"] == [[[2, 1, 1], [32, 1, 1], 0]]
    assert result["report"]["global_loads"] == 66 and result["report"]["global_stores"] == 33


def test_check_passes_a_correct_kernel_with_one_line(capsys):
    tasks.check_vector_add(good_vector_add)
    out = capsys.readouterr().out
    assert out.startswith("✓ vector_add: 7 cases passed (n=1..1000; seeds 0, 1, 2)") and out.count("\n") == 1


def test_check_fails_a_missing_guard_with_gpusims_message():
    with pytest.raises(tasks.CheckFailed, match="OutOfBoundsError") as info:
        tasks.check_vector_add(unguarded_vector_add)
    assert isinstance(info.value, AssertionError)
    assert "n=1, seed=0" in str(info.value)


def test_check_detects_elements_never_written():
    with pytest.raises(tasks.CheckFailed, match="never written") as info:
        tasks.check_vector_add(forgets_the_last_element)
    assert "n=1, seed=0" in str(info.value) and "First: [0]" in str(info.value)


def test_check_explains_a_stub():
    with pytest.raises(tasks.CheckFailed, match="not implemented yet"):
        tasks.check_vector_add(stub)


def test_empty_grid_is_refused_before_gpusim():
    def launcher(kernel, rgb, gray, height, width):
        kernel[(width // 16, height // 16), (16, 16)](rgb, gray, height, width)

    with pytest.raises(tasks.CheckFailed, match="at least 1"):
        tasks.check_grayscale(good_vector_add, launcher)


def test_poisoned_outputs_reach_the_kernel():
    seen = {}

    def launcher(kernel, rgb, gray, height, width):
        seen["nan"] = bool(np.isnan(gray).all())

    common.run(part01.GRAYSCALE, {"kernel": good_vector_add, "launch": launcher}, part01.GRAYSCALE.cases[1])
    assert seen["nan"]


def test_timeout_gets_a_hint_about_endless_loops():
    case = _vector_case(7)
    error = {"type": "KernelTimeoutError", "message": "the launch ran longer than its timeout"}
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {}, error=error))
    assert "KernelTimeoutError" in message and "loop whose variable never changes" in message


def test_errors_in_the_learners_launcher_are_reported_not_raised():
    def launcher(kernel, rgb, gray, height, width):
        kernel[(1, 1), (16, 16)](rgb, gray)  # forgot two arguments

    learner = {"kernel": good_vector_add, "launch": launcher}
    result = common.run(part01.GRAYSCALE, learner, part01.GRAYSCALE.cases[0])
    assert result["error"] is not None
    message = common.judge(part01.GRAYSCALE, part01.GRAYSCALE.cases[0], result)
    assert message.startswith("grayscale was launched wrongly for height=1, width=1, seed=0")
    assert "takes 3 arguments (a, b, out), but the launch passes 2" in message


def test_hidden_seeds_show_in_the_success_line(capsys):
    tasks.check_vector_add(good_vector_add, seeds=(17, 18))
    assert "seeds 17, 18)" in capsys.readouterr().out


# ------------------------------------------------------------------------------------- the feedback picture

def test_wrong_output_view_marks_wrong_and_unwritten_elements():
    case = common.Case((("n", 7),), 0)
    args = part01.VECTOR_ADD.make_args(case)
    out = (args["a"].astype(np.float64) + args["b"]).astype(np.float32)
    out[2] += 1.0  # wrong
    common.fill_output(out[5:], common.NAN_FILL)  # never written
    result = {"outputs": {"out": out}, "report": {}, "launches": [], "error": None}
    view = common.wrong_output_view(part01.VECTOR_ADD, case, result)
    assert view.facts["wrong"] == [2] and view.facts["unwritten"] == [5, 6]


def test_no_feedback_picture_for_a_right_output_or_an_error():
    case = common.Case((("n", 7),), 0)
    args = part01.VECTOR_ADD.make_args(case)
    right = (args["a"].astype(np.float64) + args["b"]).astype(np.float32)
    passed = {"outputs": {"out": right}, "error": None}
    failed = {"outputs": {"out": right}, "error": {"type": "RaceError", "message": "..."}}
    assert common.wrong_output_view(part01.VECTOR_ADD, case, passed) is None
    assert common.wrong_output_view(part01.VECTOR_ADD, case, failed) is None
