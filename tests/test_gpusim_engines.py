"""gpusim's vector engine is invisible except for speed: every launch of the corpus
(tests/gpusim_launch_corpus.py) gives, with engine="vector", exactly what the per-thread engine gives, checked
and unchecked: the same error (type and message), the same arrays bit for bit (NaN payloads and -0.0
included) and the same report. The kernels that must run on the vector engine are named, so that its fast
path cannot silently disappear.
`pytest -s tests/test_gpusim_engines.py -k gives` prints which engine ran each launch, and why it fell back.
"""

import numpy as np
import pytest
from gpusim_launch_corpus import launches

import gpusim
from gpusim.rebind import python_function

CORPUS = {launch.name: launch for launch in launches()}
# (launch, check) pairs: a deadlock spins until its timeout with check=False, so it runs checked only
RUNS = [(name, check) for name, launch in CORPUS.items() for check in (True, False)
        if check or launch.ends_unchecked]
MUST_VECTORIZE = (
    "bench/matmul_tiled/48",
    "golden/vector_add",
    "scale_add/n=100",
    "golden/block_reverse",
    "golden/block_sum",
    "golden/matmul_naive",
    "solution/tiled_matmul/k=20,m=17,n=9",  # the exercise's tiled matmul, edge tiles in every direction
)


def simulate(name, check, engine):
    """One launch of the corpus on one engine: the kernel, the error it raised (or None), its arguments."""
    launch = CORPUS[name]
    kernel = gpusim.jit(launch.kernel, check=check, engine=engine, **launch.options)
    args = launch.make_args()
    try:
        kernel[launch.config](*args)
    except Exception as raised:
        return kernel, raised, args
    return kernel, None, args


def error_text(error):
    return None if error is None else f"{type(error).__module__}.{type(error).__qualname__}: {error}"


def report_values(report):
    """Everything a Report says: its launch, its counters and its ratios (None when the launch raised)."""
    if report is None:
        return None
    values = {"kernel_name": report.kernel_name, "grid": report.grid, "block": report.block,
              "checked": report.checked}
    return values | report.as_dict()


def bits(array):
    """The array's bytes, one row of itemsize bytes per element (C order): equal bits, equal values."""
    return np.array(array, order="C")[..., None].view(np.uint8)


def array_difference(expected, got):
    """None, or where `got` differs from `expected` (dtype, shape or any bit of any element)."""
    if expected.dtype != got.dtype or expected.shape != got.shape:
        return f"thread gives {expected.dtype}{expected.shape}, vector {got.dtype}{got.shape}"
    differ = (bits(expected) != bits(got)).any(axis=-1).reshape(expected.shape)
    if not differ.any():
        return None
    first = tuple(int(i) for i in np.argwhere(differ)[0])
    return (f"{int(differ.sum())} of {expected.size} elements differ, first at {list(first)}: "
            f"thread {expected[first]!r}, vector {got[first]!r}")


def differences(name, thread, vector):
    """What the vector engine's run of a launch does differently from the thread engine's."""
    (thread_kernel, thread_error, thread_args), (vector_kernel, vector_error, vector_args) = thread, vector
    found = []
    if error_text(thread_error) != error_text(vector_error):
        found.append(f"error: thread {error_text(thread_error)!r}, vector {error_text(vector_error)!r}")
    code = python_function(CORPUS[name].kernel).__code__
    for arg_name, expected, got in zip(code.co_varnames, thread_args, vector_args, strict=False):
        if isinstance(expected, np.ndarray):
            difference = array_difference(expected, got)
            if difference:
                found.append(f"{arg_name}: {difference}")
    expected, got = report_values(thread_kernel.report), report_values(vector_kernel.report)
    if expected != got:
        if expected is None or got is None:
            found.append(f"report: thread {expected}, vector {got}")
        else:
            found += [f"report.{key}: thread {expected[key]}, vector {got[key]}" for key in expected
                      if expected[key] != got.get(key)]
    return found


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # a wrong softmax overflows: both engines alike
@pytest.mark.parametrize("name,check", RUNS, ids=[f"{name}-{('fast', 'checked')[on]}" for name, on in RUNS])
def test_the_vector_engine_gives_what_the_thread_engine_gives(name, check):
    thread = simulate(name, check, "thread")
    vector = simulate(name, check, "vector")
    print(f"{name} check={check}: {vector[0].engine_used}", vector[0].fallback or "")
    assert differences(name, thread, vector) == []


@pytest.mark.parametrize("check", [True, False], ids=["checked", "fast"])
@pytest.mark.parametrize("name", MUST_VECTORIZE)
def test_the_fast_path_runs_the_kernels_it_was_made_for(name, check):
    kernel, error, _ = simulate(name, check, "vector")
    assert error is None
    assert kernel.engine_used == "vector", f"the vector engine gave up: {kernel.fallback}"
    assert kernel.fallback is None


def test_the_corpus_has_awkward_shapes_buggy_kernels_and_the_kernels_that_must_vectorize():
    assert set(MUST_VECTORIZE) <= CORPUS.keys()
    assert len(CORPUS) >= 40
    configs = [gpusim.launch.parse_config(launch.config) for launch in CORPUS.values()]
    assert any(grid.y > 1 and block.y > 1 for grid, block, _ in configs), "2-D grids of 2-D blocks"
    assert any(grid.z > 1 and block.z > 1 for grid, block, _ in configs), "3-D grids of 3-D blocks"
    assert any(shared for _, _, shared in configs), "dynamic shared memory"
    wrong = [name for name in CORPUS if name.startswith("wrong/")]
    errors = {type(simulate(name, True, "thread")[1]).__name__ for name in wrong}
    assert {"RaceError", "WriteConflictError", "BarrierError", "OutOfBoundsError", "UninitializedReadError",
            "DeadlockError"} <= errors

