"""Unit tests of the exercise checkers of parts 01-03 (course.tasks.part01/02/03) and of the machinery they
use (cases, messages, NaN poisoning, budgets, the run/judge split). In-process and fast; the notebooks and
their wrong-solution fixtures are covered by test_exercises.py."""

import json
import os
from dataclasses import replace

os.environ.setdefault("COURSE_MODE", "cpu")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numba import float32  # noqa: E402

import utils  # noqa: E402  (picks the simulator before numba is imported)
from course import tasks  # noqa: E402
from course.tasks import common, part01, part02, part03, profiles  # noqa: E402

cuda = utils.cuda

ALL_TASKS = part01.TASKS + part02.TASKS + part03.TASKS
# the size that counts one block's worth of work, and the block sizes a task's cases use
SIZE = {"vector_add": "n", "matmul": "n", "block_sum": "n", "window_sum": "n", "block_scan": "n",
        "histogram": "n", "warp_sum": "n", "dot": "n", "grayscale": "width"}



# ---------------------------------------------------------------------------------------------- the cases

@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: f"{t.name}{'/launch' if t.launcher else ''}")
def test_cases_cover_tiny_uneven_and_large_sizes(task):
    sizes = [case.params[SIZE[task.name]] for case in task.cases]
    assert len({case.seed for case in task.cases}) >= 3, "several seeds"
    assert len(task.cases) >= 4
    assert any(size > 64 for size in sizes), "a size more than twice any block or tile constant"
    if task is not part01.GRAYSCALE_KERNEL:
        assert min(sizes) == 1, "a case with a single element"
        assert any(1 < size < 32 for size in sizes), "a case smaller than one block"


@pytest.mark.parametrize("task", [part01.VECTOR_ADD, part01.GRAYSCALE_KERNEL, part01.MATMUL, part03.HISTOGRAM,
                                  part03.WARP_SUM, part03.DOT], ids=lambda t: t.name)
def test_kernels_that_do_not_fix_their_block_size_run_at_several(task):
    shapes = {(p.get("threads"), p.get("block_x"), p.get("block_y")) for p in (c.params for c in task.cases)}
    assert len(shapes) >= 3


def test_matmul_shapes_make_each_dimension_the_largest_in_turn():
    largest = set()
    for case in part01.MATMUL.cases:
        p = case.params
        dims = {"m": p["m"], "k": p["k"], "n": p["n"]}
        top = max(dims.values())
        if list(dims.values()).count(top) == 1:
            largest.add(max(dims, key=dims.get))
    assert largest == {"m", "k", "n"}
    assert any(case.params["k"] > 64 for case in part01.MATMUL.cases), "k past a local array of 64"


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: f"{t.name}{'/launch' if t.launcher else ''}")
def test_inputs_are_reproducible_and_references_are_float64_or_exact(task):
    for case in task.cases[:3]:
        first, second = task.make_args(case), task.make_args(case)
        for name in set(first) - {output.name for output in task.outputs}:
            np.testing.assert_array_equal(first[name], second[name])
        expected = task.reference(case, first)
        for output in task.outputs:
            dtype = np.asarray(expected[output.name]).dtype
            assert dtype == np.float64 or (task.exact and dtype.kind == "i")


def test_vector_add_inputs_hold_zeros_and_large_values():
    args = part01.VECTOR_ADD.make_args(common.Case((("n", 1000), ("threads", 32)), 0))
    both_zero = (args["a"] == 0) & (args["b"] == 0)
    assert both_zero.sum() > 50 and np.abs(args["a"]).max() > 1e4 and args["a"][-1] < -1e5


def test_grayscale_images_hold_gray_black_and_bright_pixels():
    rgb = part01.GRAYSCALE.make_args(common.Case((("height", 20), ("width", 30)), 1))["rgb"].reshape(-1, 3)
    gray = (rgb[:, 0] == rgb[:, 1]) & (rgb[:, 1] == rgb[:, 2]) & (rgb[:, 0] > 0)
    black = (rgb == 0).all(axis=1)
    assert gray.sum() > 20 and black.sum() > 20 and (rgb > 1).any(axis=1).sum() > 20 and rgb[-1].min() > 1


def test_matmul_inputs_make_zeros_in_c():
    case = common.Case((("m", 5), ("k", 3), ("n", 4), ("block_x", 16), ("block_y", 16)), 0)
    args = part01.MATMUL.make_args(case)
    c = part01.MATMUL.reference(case, args)["c"]
    assert (c[2] == 0).all() and (c[:, 2] == 0).all()


def test_block_inputs_cycle_through_kinds_and_sum_exactly_in_float32():
    values = part02.block_inputs(32 * 8, seed=3, salt=1)
    blocks = values.reshape(8, 32).astype(np.float64)
    kinds = {"zeros" if (b == 0).all() else "big+" if b.min() >= 64 else "big-" if b.max() <= -64 else "small"
             for b in blocks}
    assert kinds == {"zeros", "big+", "big-", "small"}
    big = blocks[np.abs(blocks).min(axis=1) >= 64]
    assert (big.sum(axis=1) == big.astype(np.float32).sum(axis=1, dtype=np.float32)).all()


def test_histogram_values_have_runs_of_one_bin_and_of_the_last_bin():
    values = part03.histogram_values(64 * 4, seed=0).reshape(4, 64)
    assert any((run == run[0]).all() and run[0] == part03.BINS - 1 for run in values)
    assert sum((run == run[0]).all() for run in values) >= 2
    assert len(np.unique(values)) == part03.BINS


def test_seeds_change_the_inputs_but_not_the_sizes():
    other = part01.VECTOR_ADD.with_seeds((7, 8))
    assert {c.seed for c in other.cases} == {7, 8}
    case = part01.VECTOR_ADD.cases[3]
    a0 = part01.VECTOR_ADD.make_args(case)["a"]
    a1 = other.make_args(replace(case, seed=7))["a"]
    assert a0.shape == a1.shape and not np.array_equal(a0, a1)


def test_case_label():
    assert common.Case((("m", 3), ("n", 5)), 2).label() == "m=3, n=5, seed=2"


# ---------------------------------------------------------------------------- coalescing: warp_sectors

@cuda.jit
def good_vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def good_grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        gray[p] = (float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1]
                   + float32(0.1140) * rgb[3 * p + 2])


@cuda.jit
def good_matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        total = float32(0.0)
        for j in range(a.shape[1]):
            total += a[row, j] * b[j, col]
        c[row, col] = total


@cuda.jit
def transposed_grayscale(rgb, gray, height, width):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        gray[p] = (float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1]
                   + float32(0.1140) * rgb[3 * p + 2])


@pytest.mark.parametrize("task, kernel, sectors", [
    (part01.VECTOR_ADD, good_vector_add, part01._vector_add_sectors),
    (part01.GRAYSCALE_KERNEL, good_grayscale,
     lambda p: part01._grayscale_sectors(p, (p["block_x"], p["block_y"]))),
    (part01.MATMUL, good_matmul, part01._matmul_sectors),
], ids=["vector_add", "grayscale", "matmul"])
def test_intended_sectors_are_what_gpusim_counts_for_the_intended_kernel(task, kernel, sectors):
    for case in task.cases:
        result = common.run(task, {"kernel": kernel}, case)
        assert result["error"] is None
        assert result["report"]["global_sectors"] == sectors(case.params), case.label()


def test_a_transposed_grayscale_breaks_the_sector_budget_and_says_why():
    task, case = part01.GRAYSCALE_KERNEL, part01.GRAYSCALE_KERNEL.cases[0]  # a square image
    result = common.run(task, {"kernel": transposed_grayscale}, case)
    message = common.judge(task, case, result)
    assert "computes the right values" in message and "sector transfers of global memory" in message
    assert "col from the x indices" in message


# ------------------------------------------------------------------------------------------ launch rules

def _grayscale_case(height, width):
    return common.Case((("height", height), ("width", width)), 0)


@pytest.mark.parametrize("launch, text", [
    ([[[2, 3, 1], [16, 16, 1], 0]], None),
    ([[[3, 2, 1], [16, 16, 1], 0]], "x and y are swapped"),
    ([[[4, 4, 1], [16, 16, 1], 0]], "a grid of 2×3 covers this image just enough"),
    ([[[20, 40, 1], [1, 1, 1], 0]], "31 of the 32 lanes of its warp idle"),
    ([[[2, 3, 1], [16, 16, 1], 0]] * 2, "launched the kernel 2 times"),
])
def test_grayscale_launch_rule(launch, text):
    complaint = part01._grayscale_launch_rule(_grayscale_case(40, 20), launch)
    assert complaint is None if text is None else text in complaint


def test_dot_launch_rule_wants_the_requested_block_size_and_grid():
    task = part03.DOT
    case = next(c for c in task.cases if c.params["threads"] == 128)
    blocks = -(-case.params["n"] // 128)
    assert part03._dot_launch_rule(case, [[[blocks, 1, 1], [128, 1, 1], 512]]) is None
    message = common.judge(task, case, _result(task, case, {"out": np.zeros(1)},
                                                launches=[[[5, 1, 1], [64, 1, 1], 256]]))
    assert "asks for blocks of `threads` = 128" in message
    message = part03._dot_launch_rule(case, [[[blocks + 1, 1, 1], [128, 1, 1], 512]])
    assert f"cdiv(a.size, threads) = {blocks} blocks" in message


# ------------------------------------------------------------------------- judge (pure, no learner code)

def _result(task, case, outputs, report=None, launches=None, error=None):
    if launches is None:
        launches = [[[common.math.ceil(case.params.get("n", 1) / 32), 1, 1], [32, 1, 1], 0]]
    return {"outputs": outputs, "report": report or {}, "launches": launches, "error": error}


def _vector_case(n, seed=1, threads=32):
    return common.Case((("n", n), ("threads", threads)), seed)


def _vector_report(case, **changes):
    """The reference solution's counters on this case, some of them changed."""
    return {**profiles.profile(part01.VECTOR_ADD, case), **changes}


def _correct_vector_add(case):
    args = part01.VECTOR_ADD.make_args(case)
    return (args["a"].astype(np.float64) + args["b"]).astype(np.float32)


def test_judge_passes_correct_output_within_budget():
    case = _vector_case(33)
    result = _result(part01.VECTOR_ADD, case, {"out": _correct_vector_add(case)}, _vector_report(case))
    assert common.judge(part01.VECTOR_ADD, case, result) is None


def test_judge_reports_unwritten_nan_elements():
    case = _vector_case(33)
    out = _correct_vector_add(case)
    common.fill_output(out[32:], common.NAN_FILL)
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {"out": out}))
    assert message.startswith("vector_add gives wrong results for n=33, threads=32, seed=1; grid of 2 blocks")
    assert "1 of 33 elements of `out` still hold the NaN the check put there" in message
    assert "never written" in message and "[32]" in message and "zeros included" in message
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
    case = common.Case((("m", 3), ("k", 2), ("n", 4), ("block_x", 16), ("block_y", 16)), 0)
    args = task.make_args(case)
    c = (args["a"] @ args["b"]).astype(np.float32)
    c[2, 1] = 5.0
    message = common.judge(task, case, _result(task, case, {"c": c}))
    assert "[2, 1] expected" in message and "got 5" in message


@pytest.mark.parametrize("changes, text", [
    ({"global_loads": 99}, "99 global reads; the budget is 66"),
    ({"max_thread_accesses": 99}, "99 element accesses in its busiest thread; the budget is 3"),
    ({"global_sectors": 200}, "200 sector transfers of global memory"),
])
def test_judge_enforces_each_budget_and_names_it(changes, text):
    case = _vector_case(33)
    report = _vector_report(case, **changes)
    result = _result(part01.VECTOR_ADD, case, {"out": _correct_vector_add(case)}, report)
    message = common.judge(part01.VECTOR_ADD, case, result)
    assert "computes the right values" in message and text in message and "Hint:" in message


def test_budgets_report_a_missing_counter_instead_of_passing():
    case = _vector_case(33)
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case,
                                                            {"out": _correct_vector_add(case)}))
    assert "could not read `global_loads`" in message


def test_stencil_budget_counts_the_halo():
    assert part02._stencil_read_budget({"n": 100}) == 100 + 4 * 4
    assert part02._stencil_read_budget({"n": 1}) == 1 + 4


def test_span_budgets_sit_between_the_tree_and_a_serial_loop():
    assert part02.TREE_SPAN == 19 and part02.TREE_SPAN + 5 < 32 + 2
    spans = {case.params["threads"]: profiles.profile(part03.DOT, case)["max_thread_accesses"]
             for case in part03.DOT.cases}
    assert spans[64] == 23  # 3 to load, 3 per step of the tree, 2 to finish
    assert all(span + 4 < threads + 3 for threads, span in spans.items() if threads >= 32)


def test_judge_passes_gpusim_errors_through_with_a_hint():
    case = _vector_case(7)
    error = {"type": "OutOfBoundsError", "message": "block (0,0,0) thread (7,0,0) wrote out[7], line 4"}
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {"out": np.zeros(7)},
                                                            error=error))
    assert "n=7, threads=32, seed=1" in message and "OutOfBoundsError" in message
    assert "thread (7,0,0) wrote out[7], line 4" in message and "if i < out.size" in message


@pytest.mark.parametrize("task, conflict_hint", [
    (part01.VECTOR_ADD, "cuda.blockDim.x, never a number"),
    (part01.GRAYSCALE, "A thread with col >= width must not write"),
    (part01.MATMUL, "the block size must come from"),
    (part02.BLOCK_SUM, "only thread 0 writes it"),
    (part02.STENCIL, "thread t of block b owns"),
    (part02.BLOCK_SCAN, "thread t writes only its own tile[t]"),
    (part03.HISTOGRAM, "Use cuda.atomic.add"),
    (part03.WARP_SUM, "only lane 0 of each warp writes"),
    (part03.DOT, "with cuda.atomic.add(out, 0, total)"),
], ids=lambda value: getattr(value, "name", "hint"))
def test_a_write_conflict_is_answered_with_an_index_hint_not_a_barrier(task, conflict_hint):
    case = task.cases[0]
    error = {"type": "WriteConflictError", "message": "threads (0,0,0) and (1,0,0) both wrote x[0]"}
    message = common.judge(task, case, _result(task, case, {}, error=error))
    hint = message.split("In this exercise: ", 1)[1]
    assert conflict_hint in hint and "syncthreads" not in hint


def test_judge_explains_unsolved_stubs():
    case = _vector_case(7)
    error = {"type": "NotImplementedError", "message": ""}
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {}, error=error))
    assert "not implemented yet" in message and "raise NotImplementedError()" in message


def test_judge_rejects_a_launcher_that_never_launches():
    task, case = part01.GRAYSCALE, part01.GRAYSCALE.cases[2]
    message = common.judge(task, case, _result(task, case, {"gray": np.zeros(1)}, launches=[]))
    assert "launch_grayscale never launched the kernel" in message


def test_exact_comparison_for_integer_outputs():
    task = part03.HISTOGRAM
    case = task.cases[4]
    counts = task.reference(case, task.make_args(case))["counts"].astype(np.int32)
    report = profiles.profile(task, case)
    assert common.judge(task, case, _result(task, case, {"counts": counts}, report)) is None
    counts[0] -= 1
    message = common.judge(task, case, _result(task, case, {"counts": counts}))
    assert "exactly" in message and "1 of 16 elements of `counts` are wrong" in message


def test_shape_mismatch_is_reported():
    case = _vector_case(7)
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {"out": np.zeros(8)}))
    assert "shape (8,)" in message


# ---------------------------------------------------------------------- run and check, under gpusim

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
def block_size_32_vector_add(a, b, out):
    i = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def stub(a, b, out):
    raise NotImplementedError()


def test_run_returns_plain_data_only():
    case = _vector_case(33, threads=64)
    result = common.run(part01.VECTOR_ADD, {"kernel": good_vector_add}, case)
    assert set(result) == {"outputs", "report", "launches", "compiled", "error"}
    assert result["compiled"] is True and result["error"] is None
    assert isinstance(result["outputs"]["out"], np.ndarray)
    json.dumps({k: v for k, v in result.items() if k != "outputs"})  # the rest crosses a process boundary
    assert result["launches"] == [[[1, 1, 1], [64, 1, 1], 0]]
    assert result["report"]["global_loads"] == 66 and result["report"]["global_stores"] == 33
    assert result["report"]["max_thread_accesses"] == 3


def test_check_passes_a_correct_kernel_with_one_line(capsys):
    tasks.check_vector_add(good_vector_add)
    out = capsys.readouterr().out
    threads = [case.params["threads"] for case in part01.VECTOR_ADD.cases]
    assert out.startswith(f"✓ vector_add: {len(part01.VECTOR_ADD.cases)} cases passed (n=1..")
    assert f"threads={min(threads)}..{max(threads)}; seeds 0, 1, 2)" in out
    assert out.count("\n") == 1


def test_check_fails_a_missing_guard_with_gpusims_message():
    with pytest.raises(tasks.CheckFailed, match="OutOfBoundsError") as info:
        tasks.check_vector_add(unguarded_vector_add)
    assert isinstance(info.value, AssertionError)
    assert "It first failed on n=1, threads=32, seed=0" in str(info.value)


def test_check_fails_a_block_size_written_as_a_number():
    with pytest.raises(tasks.CheckFailed, match="WriteConflictError") as info:
        tasks.check_vector_add(block_size_32_vector_add)
    assert "It first failed on n=100, threads=64" in str(info.value) and "never a number" in str(info.value)


def test_check_detects_elements_never_written():
    with pytest.raises(tasks.CheckFailed, match="never written") as info:
        tasks.check_vector_add(forgets_the_last_element)
    assert "n=1, threads=32, seed=0" in str(info.value) and "First: [0]" in str(info.value)


def test_check_explains_a_stub():
    with pytest.raises(tasks.CheckFailed, match="not implemented yet"):
        tasks.check_vector_add(stub)


def test_empty_grid_is_refused_before_gpusim():
    def launcher(kernel, rgb, gray, height, width):
        kernel[(width // 16, height // 16), (16, 16)](rgb, gray, height, width)

    with pytest.raises(tasks.CheckFailed, match="at least 1"):
        tasks.check_grayscale(good_grayscale, launcher)


def test_grayscale_checks_the_kernel_at_other_block_shapes_before_the_launcher():
    def never_called(kernel, rgb, gray, height, width):
        raise AssertionError("the launcher runs only once the kernel passed")

    @cuda.jit
    def sixteen(rgb, gray, height, width):
        col = cuda.blockIdx.x * 16 + cuda.threadIdx.x
        row = cuda.blockIdx.y * 16 + cuda.threadIdx.y
        if row < height and col < width:
            p = row * width + col
            gray[p] = (float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1]
                       + float32(0.1140) * rgb[3 * p + 2])

    with pytest.raises(tasks.CheckFailed, match="block_x=32, block_y=4"):
        tasks.check_grayscale(sixteen, never_called)


def test_poisoned_outputs_reach_the_kernel():
    seen = {}

    def launcher(kernel, rgb, gray, height, width):
        seen["nan"] = bool(np.isnan(gray).all())

    common.run(part01.GRAYSCALE, {"kernel": good_grayscale, "launch": launcher}, part01.GRAYSCALE.cases[1])
    assert seen["nan"]


def test_timeout_gets_a_hint_about_endless_loops():
    case = _vector_case(7)
    error = {"type": "KernelTimeoutError", "message": "the launch ran longer than its timeout"}
    message = common.judge(part01.VECTOR_ADD, case, _result(part01.VECTOR_ADD, case, {}, error=error))
    assert "KernelTimeoutError" in message and "loop whose variable never changes" in message


def test_errors_in_the_learners_launcher_are_reported_not_raised():
    def launcher(kernel, rgb, gray, height, width):
        kernel[(1, 1), (16, 16)](rgb, gray)  # forgot two arguments

    learner = {"kernel": good_grayscale, "launch": launcher}
    result = common.run(part01.GRAYSCALE, learner, part01.GRAYSCALE.cases[0])
    assert result["error"] is not None
    message = common.judge(part01.GRAYSCALE, part01.GRAYSCALE.cases[0], result)
    assert message.startswith("grayscale was launched wrongly for height=1, width=1, seed=0")
    assert "takes 4 arguments (rgb, gray, height, width), but the launch passes 2" in message


def test_hidden_seeds_show_in_the_success_line(capsys):
    tasks.check_vector_add(good_vector_add, seeds=(17, 18))
    out = capsys.readouterr().out
    assert "seeds 17, 18)" in out and f"{len(part01.VECTOR_ADD.with_seeds((17,)).cases)} cases passed" in out


def test_a_serial_block_sum_fails_the_span_budget():
    threads = part02.THREADS

    @cuda.jit
    def serial(a, partial):
        if cuda.threadIdx.x == 0:
            start = cuda.blockIdx.x * threads
            partial[cuda.blockIdx.x] = np.sum(a[start:start + threads])

    with pytest.raises(tasks.CheckFailed, match="0 reads of shared memory; the task asks for at least 32"):
        tasks.check_block_sum(serial)  # the smallest case: one element, no span to speak of
    large = replace(part02.BLOCK_SUM, cases=tuple(c for c in part02.BLOCK_SUM.cases if c.params["n"] > 64))
    with pytest.raises(tasks.CheckFailed, match="element accesses in its busiest thread; the budget is 24"):
        common.check(large, {"kernel": serial})


def test_a_warp_shuffle_block_sum_fails_the_shared_memory_floor():
    @cuda.jit
    def shuffles(a, partial):
        i = cuda.grid(1)
        value = a[i] if i < a.size else np.float32(0.0)
        for offset in (16, 8, 4, 2, 1):
            value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        if cuda.threadIdx.x == 0:
            partial[cuda.blockIdx.x] = value

    with pytest.raises(tasks.CheckFailed, match="0 reads of shared memory.*\n.*warp shuffles"):
        tasks.check_block_sum(shuffles)


# ------------------------------------------------------------------------------------- the feedback picture

def test_wrong_output_view_marks_wrong_and_unwritten_elements():
    case = _vector_case(7, seed=0)
    out = _correct_vector_add(case)
    out[2] += 1.0  # wrong
    common.fill_output(out[5:], common.NAN_FILL)  # never written
    result = {"outputs": {"out": out}, "report": {}, "launches": [], "error": None}
    view = common.wrong_output_view(part01.VECTOR_ADD, case, result)
    assert view.facts["wrong"] == [2] and view.facts["unwritten"] == [5, 6]


def test_grayscale_draws_its_output_as_an_image():
    case = _grayscale_case(6, 9)
    gray = part01.GRAYSCALE.reference(case, part01.GRAYSCALE.make_args(case))["gray"].astype(np.float32)
    gray[10] += 1.0
    result = {"outputs": {"gray": gray}, "report": {}, "launches": [], "error": None}
    assert part01.GRAYSCALE.image(case) == (6, 9)
    assert common.wrong_output_view(part01.GRAYSCALE, case, result) is not None


def test_no_feedback_picture_for_a_right_output_or_an_error():
    case = _vector_case(7, seed=0)
    right = _correct_vector_add(case)
    passed = {"outputs": {"out": right}, "error": None}
    failed = {"outputs": {"out": right}, "error": {"type": "RaceError", "message": "..."}}
    assert common.wrong_output_view(part01.VECTOR_ADD, case, passed) is None
    assert common.wrong_output_view(part01.VECTOR_ADD, case, failed) is None
