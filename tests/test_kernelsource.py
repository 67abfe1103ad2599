"""course.kernelsource: kernels described as plain JSON data, rebuilt without running learner code."""

import copy
import json
import linecache
import math

import numpy as np
import pytest
from numba import cuda, float32

import gpusim
from course.kernelsource import KernelSourceError, describe, rebuild, validate

SCALE = np.float32(2.5)
OFFSETS = np.arange(8, dtype=np.float32)
CONSTANTS = (1, 2.5, float("nan"), -math.inf, 1 + 2j, True, None, (np.int16(-3), np.float64(0.1)))
NOT_FOR_KERNELS = [1, 2, 3]


@cuda.jit(device=True)
def scaled(x):
    return x * SCALE + OFFSETS[1]


def make_kernel(T):
    @cuda.jit
    def kernel(a, out):
        i = cuda.grid(1)
        tile = cuda.shared.array(T, float32)
        tile[cuda.threadIdx.x] = a[i] if i < a.size else float32(0.0)
        cuda.syncthreads()
        if i < out.size:
            out[i] = scaled(tile[(cuda.threadIdx.x + 1) % T]) + math.sqrt(float32(T))

    return kernel


@cuda.jit
def reads_constants(out):
    out[0] = CONSTANTS[0] + CONSTANTS[1]


@cuda.jit
def off_by_one(a, out):
    i = cuda.grid(1)
    if i <= out.size:
        out[i] = a[i]


@cuda.jit
def uses_a_list(out):
    out[0] = NOT_FOR_KERNELS[0]


def round_trip(kernel, device=None):
    """Describe, send through JSON text, rebuild."""
    return rebuild(json.loads(json.dumps(describe(kernel), allow_nan=False)), device=device)


def test_a_factory_kernel_with_a_device_function_runs_the_same_after_a_round_trip():
    original = make_kernel(32)
    a = np.linspace(-1, 1, 100, dtype=np.float32)
    outputs, reports = [], []
    for kernel in (original, round_trip(original)):
        out = np.full(100, np.nan, np.float32)
        launcher = gpusim.jit(kernel)
        launcher[4, 32](a, out)
        outputs.append(out)
        reports.append(launcher.report.as_dict())
    np.testing.assert_array_equal(outputs[0], outputs[1])
    assert reports[0] == reports[1] and reports[0]["shared_loads"] > 0


def test_the_spec_holds_the_def_without_decorators_and_the_values_it_uses():
    spec = describe(make_kernel(16))
    assert spec["source"].startswith("def kernel(a, out):\n") and "@cuda.jit" not in spec["source"]
    assert spec["firstline"] == make_kernel(16).py_func.__code__.co_firstlineno + 1  # after @cuda.jit
    assert spec["closure"] == {"T": {"int": 16}}
    assert spec["globals"]["float32"] == {"attribute": ["numba", "float32"]}
    assert spec["globals"]["cuda"] == {"module": "numba.cuda"}
    assert spec["globals"]["math"] == {"module": "math"}
    device = spec["globals"]["scaled"]["function"]
    assert device["jit"] and device["source"].startswith("def scaled(x):")
    assert set(device["globals"]) == {"SCALE", "OFFSETS"}
    assert "range" not in spec["globals"]


def test_constants_keep_their_values_and_numpy_types():
    namespace = round_trip(reads_constants).__globals__
    rebuilt = namespace["CONSTANTS"]
    assert rebuilt[:2] == (1, 2.5) and math.isnan(rebuilt[2]) and rebuilt[3] == -math.inf
    assert rebuilt[4:7] == (1 + 2j, True, None)
    assert type(rebuilt[7][0]) is np.int16 and rebuilt[7][0] == -3
    assert type(rebuilt[7][1]) is np.float64 and rebuilt[7][1] == 0.1


def test_module_level_arrays_and_numpy_scalars_survive_and_arrays_become_read_only():
    namespace = round_trip(make_kernel(8)).__globals__
    assert type(namespace["SCALE"]) is np.float32 and namespace["SCALE"] == SCALE
    np.testing.assert_array_equal(namespace["OFFSETS"], OFFSETS)
    assert namespace["OFFSETS"].dtype == np.float32 and not namespace["OFFSETS"].flags.writeable


def test_device_functions_are_wrapped_only_when_asked_and_only_if_they_were_jitted():
    plain = round_trip(make_kernel(8))
    assert plain.__globals__["scaled"].__name__ == "scaled" and callable(plain.__globals__["scaled"])
    wrapped = round_trip(make_kernel(8), device=lambda fn: ("device", fn))
    kind, function = wrapped.__globals__["scaled"]
    assert kind == "device" and function.__name__ == "scaled"


def test_a_gpusim_error_in_the_rebuilt_kernel_names_the_same_line_as_in_the_original():
    messages = []
    for kernel in (off_by_one, round_trip(off_by_one)):
        with pytest.raises(gpusim.OutOfBoundsError) as error:
            gpusim.jit(kernel)[1, 32](np.zeros(40, np.float32), np.zeros(31, np.float32))
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert "test_kernelsource.py:" in messages[0] and "out[i] = a[i]" in messages[0]


def test_describe_names_what_a_kernel_cannot_use():
    with pytest.raises(KernelSourceError, match="kernel `uses_a_list` uses `NOT_FOR_KERNELS`, a list"):
        describe(uses_a_list)


def _spec(source, name="k", **changes):
    spec = {"version": 1, "id": 0, "jit": True, "name": name, "filename": "<hostile>", "firstline": 1,
            "source": source, "globals": {}, "closure": {}, "defaults": None}
    spec.update(changes)
    return spec


def test_rebuild_runs_no_code_from_defaults_decorators_or_annotations(tmp_path):
    marks = [tmp_path / name for name in ("default", "decorator", "annotation", "returns")]
    source = (f"@open({str(marks[1])!r}, 'w').close\n"
              f"def k(a: open({str(marks[2])!r}, 'w'), b=open({str(marks[0])!r}, 'w')) "
              f"-> open({str(marks[3])!r}, 'w'):\n"
              "    a[0] = b\n")
    kernel = rebuild(_spec(source, defaults=[{"int": 7}]))
    assert not any(mark.exists() for mark in marks)
    assert kernel.__defaults__ == (7,) and kernel.__annotations__ == {}
    out = np.zeros(1)
    kernel(out)
    assert out[0] == 7


def _deep(levels, make):
    value = {"int": 1}
    for _ in range(levels):
        value = make(value)
    return value


OK = "def k(a):\n    a[0] = 1\n"
HOSTILE = {
    "not a dict": [],
    "a string": "def k(): pass",
    "missing keys": {"version": 1},
    "version as text": _spec(OK, version="1"),
    "boolean id": _spec(OK, id=True),
    "firstline as float": _spec(OK, firstline=1.0),
    "10 MB source": _spec(OK + "#" * 10_000_000),
    "10 MB filename": _spec(OK, filename="x" * 10_000_000),
    "10 MB name": _spec(OK, name="k" * 10_000_000),
    "10 MB global name": _spec(OK, globals={"g" * 10_000_000: {"int": 1}}),
    "10 MB float text": _spec(OK, globals={"g": {"float": "1" * 10_000_000}}),
    "tuples 100000 deep": _spec("def k(a):\n    a[0] = 1\n",
                                globals={"g": _deep(100_000, lambda v: {"tuple": [v]})}),
    "functions 100000 deep": _spec(OK, globals={"g": _deep(
        100_000, lambda v: {"function": _spec("def h():\n    pass\n", name="h", globals={"g": v})})}),
    "unknown module os": _spec(OK, globals={"g": {"module": "os"}}),
    "module builtins": _spec(OK, globals={"g": {"module": "builtins"}}),
    "private attribute numpy._core": _spec("def k(a):\n    a[0] = 1\n",
                                           globals={"g": {"attribute": ["numpy", "_core"]}}),
    "builtins.eval": _spec(OK, globals={"g": {"attribute": ["builtins", "eval"]}}),
    "dunder global": _spec(OK, globals={"__builtins__": {"module": "math"}}),
    "two statements": _spec("def k(a):\n    a[0] = 1\nimport os\n"),
    "a def and a call": _spec("def k(a):\n    a[0] = 1\nk(1)\n"),
    "not a def": _spec("import os\n"),
    "a class": _spec("class k:\n    pass\n"),
    "an async def": _spec("async def k(a):\n    a[0] = 1\n"),
    "another name": _spec("def other(a):\n    a[0] = 1\n"),
    "invalid Python": _spec("def k(a):\n    a[0] = \n"),
    "deeply nested source": _spec("def k(a):\n    return " + "-" * 90_000 + "1\n"),
    "object dtype": _spec(OK, globals={"g": {"scalar": {"dtype": "O", "data": ""}}}),
    "absurd shape": _spec(OK, globals={"g": {"array": {
        "dtype": "<f4", "shape": [2**20, 2**20, 2**20], "data": ""}}}),
    "bytes that do not match the shape": _spec(OK, globals={"g": {"array": {
        "dtype": "<f4", "shape": [3], "data": "AAAAAA=="}}}),
    "not base64": _spec(OK, globals={"g": {"scalar": {"dtype": "<f4", "data": "!!!!!!!!"}}}),
    "int too large": _spec(OK, globals={"g": {"int": 2**80}}),
    "two tags in a value": _spec(OK, globals={"g": {"int": 1, "bool": True}}),
    "reference to nothing": _spec(OK, globals={"g": {"function_ref": 5}}),
    "duplicate ids": _spec(OK, globals={"g": {"function": _spec("def h():\n    pass\n",
                                                                                         name="h")}}),
    "defaults not a list": _spec(OK, defaults={"int": 1}),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_validate_refuses_hostile_specs_with_kernel_source_error_only(name):
    with pytest.raises(KernelSourceError, match="not a valid kernel description"):
        validate(HOSTILE[name])


def test_the_specs_that_describe_writes_are_valid_and_a_changed_one_is_not():
    spec = describe(make_kernel(8))
    validate(spec)
    broken = copy.deepcopy(spec)
    broken["globals"]["scaled"]["function"]["globals"]["OFFSETS"]["array"]["shape"] = [9]
    with pytest.raises(KernelSourceError):
        validate(broken)


def test_rebuild_refuses_one_name_with_two_meanings():
    helper = _spec("def h():\n    return LIMIT\n", name="h", id=1, globals={"LIMIT": {"int": 2}})
    spec = _spec("def k(a):\n    a[0] = h() + LIMIT\n",
                 globals={"LIMIT": {"int": 1}, "h": {"function": helper}})
    with pytest.raises(KernelSourceError, match="use the name `LIMIT` for different things"):
        rebuild(spec)


def test_rebuild_puts_the_source_where_messages_look_for_it_and_keeps_cached_cells():
    kernel = rebuild(_spec(OK, filename="<a cell this process never ran>", firstline=5))
    assert linecache.getline("<a cell this process never ran>", 6) == "    a[0] = 1\n"
    assert kernel.__code__.co_firstlineno == 5
    cell = ["x = 1\n", "def k(a):\n", "    a[0] = 1\n", "y = 2\n"]
    linecache.cache["<cell 3>"] = (0, None, list(cell), "<cell 3>")
    rebuild(_spec(OK, filename="<cell 3>", firstline=2))
    assert linecache.getlines("<cell 3>") == cell


def _paths(value, path=()):
    """Every (path, leaf-or-container) position in a JSON-like value."""
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from _paths(item, (*path, key))


def test_every_position_of_a_real_spec_replaced_by_junk_gives_kernel_source_error_or_a_valid_spec():
    spec = json.loads(json.dumps(describe(make_kernel(8))))
    junk = [None, True, -1, 2**70, 1.5, "x", "", [], {}, [{}], {"int": 1}, {"tuple": None}, {"function": []}]
    for path in list(_paths(spec))[1:]:
        for value in junk:
            changed = copy.deepcopy(spec)
            target = changed
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
            try:
                rebuild(changed)
            except KernelSourceError:
                pass


def test_describe_refuses_what_is_not_a_kernel():
    with pytest.raises(KernelSourceError, match="not NoneType"):
        describe(None)
