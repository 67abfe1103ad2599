"""Size cliffs (course.tasks.cliffs): a constant only sizes past every checked case reach is refused, with its
line; the course's own solutions and lessons' sizes hold none."""

import linecache
import os

os.environ.setdefault("COURSE_MODE", "cpu")

import pytest  # noqa: E402

import utils  # noqa: E402  (picks the simulator before numba is imported)
from course.kernelsource import describe  # noqa: E402
from course.tasks import cliffs, common, part02, part04, part06  # noqa: E402

cuda = utils.cuda
LIMIT = 6000


def _function(source: str, name: str, filename: str, **names):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"cuda": cuda, "np": utils.np, "LIMIT": LIMIT, **names}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


CLIFFS = {  # source of a sigmoid3_backward kernel -> the line with the cliff
    "literal": ("if i < x.size and x.size < 5000:", 3),
    "constant expression": ("if i < x.size and x.size <= 4 * 1024 + 7:", 3),
    "global": ("if i < x.size and x.size < LIMIT:", 3),
    "local name": ("big = 1 << 14\n    if i < x.size and x.size < big:", 4),
    "cast": ("if i < x.size and x.size < np.int64(70000):", 3),
}
KERNEL = """def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    {guard}
        dx[i] = dout[i]
"""


@pytest.mark.parametrize("kind", CLIFFS)
def test_a_comparison_with_a_constant_past_every_case_is_refused_with_its_line(kind):
    guard, line = CLIFFS[kind]
    source = KERNEL.format(guard=guard)
    kernel = _function(source, "sigmoid3_backward", f"<cliff {kind}>")
    largest = cliffs.largest_size(part04.SIGMOID3_BACKWARD)
    found = cliffs.cliffs_in_spec(describe(cuda.jit(kernel)), largest)
    assert [(f, n) for f, n, _, _ in found] == [(f"<cliff {kind}>", line)], found
    task = part04.SIGMOID3_BACKWARD
    result = common.run(task, {"kernel": cuda.jit(kernel)}, task.cases[0])
    assert result["error"]["type"] == "UntestedSizeError"
    message = common.judge(task, task.cases[0], result)
    assert utils.gpusim.describe_line(f"<cliff {kind}>", line) in message
    assert "never tested" in message and f"the largest is {largest}" in message


def test_loops_and_clamps_are_cliffs_and_small_constants_are_not():
    source = """def rows(x, out):
    for c in range(8192):
        if c < x.shape[1]:
            out[0] = min(x.shape[0], 100000)
    t = 32
    if t < 64 and x.shape[0] < 2 * 16:
        out[1] = max(x.shape[1], 3)
"""
    kernel = _function(source, "rows", "<loops>")
    found = cliffs.cliffs_in_spec(describe(cuda.jit(kernel)), 1000)
    assert [(n, value) for _, n, value, _ in found] == [(2, 8192), (4, 100000)]


def test_a_plain_python_function_is_read_the_same_way():
    source = """def online(x, chunk):
    if len(x) > 123456:
        return x[:0]
    return x
"""
    function = _function(source, "online", "<online>")
    assert [(n, v) for _, n, v, _ in cliffs.cliffs_in_function(function, 5000)] == [(2, 123456)]
    assert cliffs.cliffs_in_function(function, 200000) == []


@pytest.mark.parametrize("task", [part02.BLOCK_SUM, part04.TRANSPOSE, part06.ROW_SOFTMAX],
                         ids=lambda task: task.name)
def test_the_largest_size_covers_the_cases_and_their_element_counts(task):
    largest = cliffs.largest_size(task)
    for case in task.cases:
        numbers = [v for v in dict(case.params).values() if type(v) is int]
        assert largest >= max(numbers)


def test_a_matrix_side_is_compared_with_the_largest_side_not_the_largest_matrix():
    """m == 2048 is past every matrix side the tiled matmul's cases use, though some matrices of the check
    hold more than 2048 elements."""
    from course.tasks import part05

    source = """def tiled_matmul(a, b, c):
    i, j = cuda.grid(2)
    if a.shape[0] == 2048:
        return
"""
    kernel = _function(source, "tiled_matmul", "<side>")
    task = part05.TILED_MATMUL
    assert max(array.size for case in task.cases for array in task.make_args(case).values()
               if hasattr(array, "size")) > 2048
    found = cliffs.cliffs_in_spec(describe(cuda.jit(kernel)), cliffs.largest_size(task))
    assert [(n, value) for _, n, value, _ in found] == [(3, 2048)]


def test_hostile_constant_expressions_are_not_computed():
    source = """def f(x, chunk):
    a = 2 ** 64
    b = ((a ** 64) ** 64) ** 64
    c = b * b * b * b
    if len(x) > 1 << -1 or len(x) > c or len(x) > 5 // 0 or len(x) > 2 ** -3:
        return x
    return x
"""
    function = _function(source, "f", "<hostile>")
    assert cliffs.cliffs_in_function(function, 100) == []
