"""course.compilegate: Numba's CUDA compiler, with no GPU, as a gate in front of every kernel check.

The test process runs Numba's simulator (tests/conftest.py), so compiles go through the helper process.
"""

import json
import linecache
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

import gpusim
from course import compilegate
from course.kernelsource import KernelSourceError, describe
from course.tasks import part01, part06, part07

ROOT = Path(__file__).resolve().parent.parent
AVAILABLE, WHY = compilegate.available()
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=WHY)

SCRATCH = np.zeros(4, np.float32)


@cuda.jit(device=True)
def twice(x):
    return 2 * x


@cuda.jit
def doubles(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = twice(a[i])


@cuda.jit
def uses_a_list(a, out):
    i = cuda.grid(1)
    steps = [1, 2]
    out[i] = a[i] * steps[0]


@cuda.jit
def imports_inside(a, out):
    import math

    out[0] = math.pi


@cuda.jit
def returns_a_value(a, out):
    i = cuda.grid(1)
    return a[i]


@cuda.jit
def writes_module_array(a, out):
    i = cuda.grid(1)
    SCRATCH[0] = a[i]


@cuda.jit
def inverts_a_matrix(a, out):
    inverse = np.linalg.inv(a)
    out[0] = inverse[0, 0]


@cuda.jit
def prints_a_list(a, out):
    print([a[0], a[1]])


@cuda.jit(device=True)
def helper_with_a_dict(x):
    table = {}  # noqa: F841 (the dict is the mistake under test)
    return x


@cuda.jit
def calls_a_bad_helper(a, out):
    out[0] = helper_with_a_dict(a[0])


def line_of(fn, text):
    """(filename, line number) of the first line of `fn` that holds `text`."""
    code = fn.py_func.__code__
    lines = linecache.getlines(code.co_filename)
    number = next(n for n in range(code.co_firstlineno, len(lines) + 1) if text in lines[n - 1])
    return code.co_filename, number


def vectors(n=8):
    return np.zeros(n, np.float32), np.zeros(n, np.float32)


def gate(kernel, args):
    compilegate.compile_kernel(describe(kernel), compilegate.signature_of(args))


def test_a_kernel_with_a_device_function_compiles():
    gate(doubles, vectors())


REJECTED = {  # kernel, args, the line the message must show, words that must be in it
    "a list": (uses_a_list, vectors(), "steps = [1, 2]", "memory that a GPU kernel cannot allocate"),
    "an import": (imports_inside, vectors(), "import math", "cannot import"),
    "a returned value": (returns_a_value, vectors(), "return a[i]", "cannot return a value"),
    "a write to a module-level array": (writes_module_array, vectors(), "SCRATCH[0] = a[i]", "read-only"),
    "np.linalg.inv": (inverts_a_matrix, (np.eye(2, dtype=np.float32), np.zeros(1, np.float32)),
                      "inverse = np.linalg.inv(a)", "np.linalg"),
    "print of a list": (prints_a_list, vectors(), "print([a[0], a[1]])", "print"),
    "a dict in a device function": (calls_a_bad_helper, vectors(), "table = {}", "helper_with_a_dict"),
}


@pytest.mark.parametrize("name", REJECTED)
def test_kernels_a_gpu_refuses_are_rejected_with_their_line(name):
    kernel, args, text, words = REJECTED[name]
    with pytest.raises(gpusim.CompileError) as error:
        gate(kernel, args)
    message = str(error.value)
    filename, line = line_of(kernel if name != "a dict in a device function" else helper_with_a_dict, text)
    assert f"{os.path.basename(filename)}:{line} (`{text}" in message
    assert words in message and f"kernel `{kernel.__name__}`" in message
    assert "\nHint: " in message and "During:" not in message and "site-packages" not in message


def solution_namespace(notebook, grade_ids, **names):
    """Run the cells of a solution notebook with these grade ids (and no others) in one namespace."""
    cells = json.loads((ROOT / "solutions" / notebook).read_text())["cells"]  # nbformat takes 1.5 s to import
    namespace = {"cuda": cuda, "np": np, "float32": float32, **names}
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("grade_id") in grade_ids:
            source = "".join(cell["source"])
            filename = f"<{notebook} cell {index + 1}>"
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            exec(compile(source, filename, "exec"), namespace)
    return namespace


@cuda.jit
def sums_in_float64(a, out):
    i = cuda.grid(1)
    if i < out.size:
        total = 0.0
        for j in range(3):
            total += a[i] * j
        out[i] = total


@cuda.jit
def float64_tile(a, out):
    tile = cuda.shared.array(32, np.float64)
    i = cuda.threadIdx.x
    tile[i] = a[i]
    cuda.syncthreads()
    out[i] = tile[31 - i]


@cuda.jit(device=True)
def tenth(x):
    return x * 0.1


@cuda.jit
def float64_in_a_device_function(a, out):
    i = cuda.grid(1)
    out[i] = tenth(a[i])


@cuda.jit
def float64_zero_for_the_edge(a, out):
    tile = cuda.shared.array(8, float32)
    i, total = cuda.threadIdx.x, float32(0.0)
    for k0 in range(0, a.size, 8):
        tile[i] = a[k0 + i] if k0 + i < a.size else 0.0
        cuda.syncthreads()
        total += tile[7 - i]
        cuda.syncthreads()
    out[i] = total


@cuda.jit
def float32_with_a_float_comparison(a, out):
    i = cuda.grid(1)
    if i < out.size and a[i] > 0.5:
        out[i] = a[i] * float32(2.0)


FLOAT64 = {  # kernel, the function and line the message must show, the instruction it names
    "a float64 sum": (sums_in_float64, sums_in_float64, "total += a[i] * j", "fma.rn.f64"),
    "a float64 shared tile": (float64_tile, float64_tile, "tile[i] = a[i]", "st.shared.f64"),
    "a float literal in a device function": (float64_in_a_device_function, float64_in_a_device_function,
                                             "out[i] = tenth(a[i])", "mul.f64"),
    "a float32 value carried as float64": (float64_zero_for_the_edge, float64_zero_for_the_edge,
                                           "tile[i] = a[k0 + i] if k0 + i < a.size else 0.0",
                                           "cvt.rn.f32.f64 (a float32 value carried as float64)"),
}


@pytest.mark.parametrize("name", FLOAT64)
def test_float64_arithmetic_is_refused_with_its_line_where_the_task_says_float32(name):
    kernel, where, text, instruction = FLOAT64[name]
    args = (np.zeros(32, np.float32), np.zeros(32, np.float32))
    gate(kernel, args)  # Numba compiles it: only a float32 task refuses it
    with pytest.raises(compilegate.PrecisionError) as error:
        compilegate.compile_kernel(describe(kernel), compilegate.signature_of(args), arithmetic="float32")
    message = str(error.value)
    filename, line = line_of(where, text)
    assert f"{instruction} at {os.path.basename(filename)}:{line} (`{text}`)" in message
    assert "a float literal such as 0.0" in message and "Hint: write float32 constants" in message
    assert ("the line that calls it" in message) == (kernel is float64_in_a_device_function)


def test_a_comparison_with_a_float_literal_is_not_float64_arithmetic():
    args = (np.zeros(32, np.float32), np.zeros(32, np.float32))
    compilegate.compile_kernel(describe(float32_with_a_float_comparison), compilegate.signature_of(args),
                               arithmetic="float32")


def test_the_course_solution_kernels_compile():
    f32 = np.zeros
    first = solution_namespace("01_kernels_in_python.ipynb", {"vector_add_solution", "grayscale_solution",
                                                              "matmul_solution"})
    tiled = solution_namespace("05_tiled_matmul.ipynb", {"make_tiled_matmul_solution",
                                                          "tiled_matmul_dynamic_solution"})
    softmax = solution_namespace("06_softmax.ipynb", {"row_softmax_constants", "row_softmax_solution"},
                                 tasks=part06)
    flash = solution_namespace("07_flash_attention.ipynb", {"numpy_imports", "kernel_constants",
                                                             "flash_attention_causal_solution"}, tasks=part07)
    matrices = (f32((5, 7), np.float32), f32((7, 3), np.float32), f32((5, 3), np.float32))
    heads = [f32((2, 9, part07.HEAD_DIM), np.float32) for _ in range(4)]
    for kernel, args in [
        (softmax["row_softmax"], (f32((3, 70), np.float32), f32((3, 70), np.float32))),
        (flash["flash_attention_causal"], (*heads, f32((2, 9), np.float32), np.float32(0.35))),
    ]:
        gate(kernel, args)
    for kernel, args in [  # the tasks of Parts 1 and 5 compute in float32, and so do their solutions
        (first["vector_add"], tuple(part01.VECTOR_ADD.make_args(part01.VECTOR_ADD.cases[0]).values())),
        (first["grayscale"], tuple(part01.GRAYSCALE.make_args(part01.GRAYSCALE.cases[0]).values())),
        (first["matmul"], matrices),
        (tiled["make_tiled_matmul"](8), matrices),
        (tiled["tiled_matmul_dynamic"], (*matrices, 16)),
    ]:
        compilegate.compile_kernel(describe(kernel), compilegate.signature_of(args), arithmetic="float32")


def test_a_second_identical_compile_comes_from_the_cache(monkeypatch):
    monkeypatch.setattr(compilegate, "_cache", type(compilegate._cache)())
    calls = []
    compile_once = compilegate._compile
    monkeypatch.setattr(compilegate, "_compile", lambda *args: calls.append(args) or compile_once(*args))
    a, out = vectors()
    for args in [(a, out), (a, out), (np.zeros(3), np.zeros(3))]:
        gate(doubles, args)
    assert len(calls) == 2  # the float64 signature is another compile
    with pytest.raises(gpusim.CompileError):
        gate(uses_a_list, vectors())
    with pytest.raises(gpusim.CompileError):
        gate(uses_a_list, vectors())
    assert len(calls) == 3  # a refusal is cached as well


def test_with_the_simulator_on_the_helper_process_compiles_and_survives_being_killed():
    assert compilegate._simulator_on()
    gate(doubles, (np.zeros(4, np.int32), np.zeros(4, np.int32)))
    helper = compilegate._helper
    started = helper.started
    os.kill(helper.process.pid, signal.SIGKILL)
    helper.process.wait()
    gate(doubles, (np.zeros(4, np.int64), np.zeros(4, np.int64)))  # a new signature: not cached
    assert helper.started == started + 1 and helper.process.poll() is None


def test_start_early_starts_one_helper_that_the_first_compile_then_uses():
    helper = compilegate._helper
    helper.stop()
    compilegate.start_early()
    process, started = helper.process, helper.started
    assert helper.running()
    compilegate.start_early()  # already running: no second one
    gate(doubles, (np.zeros(4, np.uint16), np.zeros(4, np.uint16)))
    assert helper.process is process and helper.started == started


def test_a_compile_past_its_deadline_is_stopped_with_a_message(monkeypatch):
    monkeypatch.setattr(compilegate, "COMPILE_TIMEOUT_S", 0.001)
    with pytest.raises(gpusim.CompileError, match="took longer than 0.001 s"):
        gate(doubles, (np.zeros(4, np.int16), np.zeros(4, np.int16)))
    assert compilegate._helper.process is None  # stopped; the next compile starts a new one


def test_without_the_simulator_it_compiles_in_the_process_itself(tmp_path):
    script = tmp_path / "in_process.py"
    script.write_text(
        "import numpy as np\n"
        "from numba import cuda\n"
        "from gpusim import CompileError\n"
        "from course import compilegate\n"
        "from course.kernelsource import describe\n"
        "def kernel(out):\n"
        "    out[0] = [1][0]\n"
        "signature = compilegate.signature_of((np.zeros(1),))\n"
        "try:\n"
        "    compilegate.compile_kernel(describe(cuda.jit(kernel)), signature)\n"
        "except CompileError as error:\n"
        "    print(error)\n"
        "print('helpers started:', compilegate._helper.started)\n")
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "in_process.py:7 (`out[0] = [1][0]`)" in result.stdout and "helpers started: 0" in result.stdout


def test_signatures_are_plain_data_and_convert_to_numba_types():
    from numba.core import types

    matrix = np.zeros((3, 4), np.float32)
    args = (matrix, matrix.T, matrix[:, ::2], 3, 2.5, np.int32(1), True, (1, 2.0))
    signature = compilegate.signature_of(args)
    assert signature == [
        {"array": {"dtype": "float32", "ndim": 2, "layout": "C"}},
        {"array": {"dtype": "float32", "ndim": 2, "layout": "F"}},
        {"array": {"dtype": "float32", "ndim": 2, "layout": "A"}},
        {"scalar": "int64"}, {"scalar": "float64"}, {"scalar": "int32"}, {"scalar": "boolean"},
        {"tuple": [{"scalar": "int64"}, {"scalar": "float64"}]},
    ]
    assert compilegate.argument_types(signature) == (
        types.float32[:, ::1], types.float32[::1, :], types.float32[:, :], types.int64, types.float64,
        types.int32, types.boolean, types.Tuple([types.int64, types.float64]))


def _nested_tuple(levels):
    item = {"scalar": "int64"}
    for _ in range(levels):
        item = {"tuple": [item]}
    return [item]


@pytest.mark.parametrize("signature", [
    None, "float32", [{"scalar": "object"}], [{"array": {"dtype": "float32"}}],
    [{"array": {"dtype": "float32", "ndim": 99, "layout": "C"}}],
    [{"array": {"dtype": "float32", "ndim": True, "layout": "C"}}],
    _nested_tuple(100_000), [{"scalar": "int64"}] * 1000])
def test_a_malformed_signature_is_refused(signature):
    with pytest.raises(KernelSourceError, match="not a valid kernel signature"):
        compilegate.check_signature(signature)


def test_an_argument_a_kernel_cannot_take_is_named():
    with pytest.raises(gpusim.CompileError, match="argument 2 of the launch is list"):
        compilegate.signature_of((np.zeros(2), [1, 2]))


def allocates_an_array(a):
    scratch = np.zeros(4, np.float32)
    a[0] = scratch[0]


def multiplies_a_list(a):
    scratch = [0] * 16
    a[0] = scratch[0]


def calls_np_dot(a):
    a[0] = np.dot(a, a)


@pytest.mark.parametrize("kernel, words", [
    (allocates_an_array, "cannot create arrays"), (multiplies_a_list, "Python list"),
    (calls_np_dot, "no GPU version of this function"),
])
def test_common_numpy_habits_get_a_specific_explanation(kernel, words):
    with pytest.raises(gpusim.CompileError) as error:
        gate(kernel, (np.zeros(4, np.float32),))
    assert words in str(error.value) and "GPU kernel can use numbers" not in str(error.value)
