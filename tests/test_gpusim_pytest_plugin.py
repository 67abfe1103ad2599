"""`pytest --gpusim` (gpusim/pytest_plugin.py): a Numba CUDA test suite, unchanged, runs its launches under
gpusim: a race fails the test that launched it, results land where the test reads them, counters are
listed."""

import pytest

pytest_plugins = ["pytester"]

SUITE = '''
import numpy as np
from numba import cuda


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def racy_total(a, out):
    total = cuda.shared.array(1, np.float32)
    if cuda.threadIdx.x == 0:
        total[0] = 0
    cuda.syncthreads()
    total[0] += a[cuda.threadIdx.x]
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        out[0] = total[0]


@cuda.jit
def arrival(counter, order):
    order[cuda.atomic.add(counter, 0, 1)] = cuda.threadIdx.x


def test_arrival():
    counter, order = np.zeros(1, np.int32), np.zeros(64, np.int32)
    arrival[1, 64](counter, order)
    print(f"first to arrive: thread {order[0]}")


def test_add():
    a = np.arange(100, dtype=np.float32)
    out = np.zeros_like(a)
    add[4, 32](a, a, out)
    assert (out == 2 * a).all()


def test_add_on_device_arrays():
    a = cuda.to_device(np.ones(64, np.float32))
    out = cuda.device_array(64, np.float32)
    add[2, 32](a, a, out)
    assert (out.copy_to_host() == 2).all()


def test_racy_total():
    a = np.ones(32, np.float32)
    out = np.zeros(1, np.float32)
    racy_total[1, 32](a, out)
    assert out[0] > 0
'''


def run(pytester, *args, simulator=True):
    pytester.makepyfile(test_kernels=SUITE)
    if not simulator:
        pytester._monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    return pytester.runpytest_subprocess("-p", "gpusim.pytest_plugin", "-p", "no:cacheprovider", *args)


def test_without_the_flag_numba_s_simulator_runs_the_suite_and_misses_the_race(pytester):
    result = run(pytester)
    result.assert_outcomes(passed=4)
    assert "gpusim: kernel launches" not in result.stdout.str()


def test_with_the_flag_the_race_fails_its_test_with_gpusim_s_message(pytester):
    result = run(pytester, "--gpusim")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*WriteConflictError*both wrote total[[]0[]]*",
                                 "*FAILED test_kernels.py::test_racy_total*"])


def test_the_summary_lists_each_kernel_s_launches_and_counters(pytester):
    result = run(pytester, "--gpusim", "-k", "add")
    result.assert_outcomes(passed=2, deselected=2)
    result.stdout.fnmatch_lines(["*gpusim: kernel launches and counters*", "kernel * launches *global_loads*",
                                 "add * 2 * 6 * 192 * 0 * 328 * 164 * 63 * 0"])


def test_without_numba_s_simulator_launches_of_real_dispatchers_run_on_gpusim(pytester):
    """numba-cuda with no GPU and no simulator: a launch would need a driver; under --gpusim it needs none."""
    result = run(pytester, "--gpusim", "-k", "test_add and not device", simulator=False)
    result.assert_outcomes(passed=1, deselected=3)


def test_a_schedule_is_passed_on(pytester):
    """Under ("hold", 0) warp 0 runs only when warp 1 cannot: thread 32 comes first."""
    assert "first to arrive: thread 0" in run(pytester, "--gpusim", "-k", "arrival", "-s").stdout.str()
    held = run(pytester, "--gpusim", "--gpusim-schedule=hold:0", "-k", "arrival", "-s")
    assert "first to arrive: thread 32" in held.stdout.str()


def test_a_malformed_schedule_is_a_usage_error(pytester):
    result = run(pytester, "--gpusim", "--gpusim-schedule=random:x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gpusim-schedule 'random:x'*integer*"])
