"""Every bug class raises the right gpusim error, with block, thread, array, index, line and a hint."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import gpusim_kernels as K
import numpy as np
import pytest
from numba import cuda

import gpusim

RNG = np.random.default_rng(0)
A32 = RNG.random((32, 32), dtype=np.float32)


def raises(error, kernel, config, *args, **options):
    with pytest.raises(error) as info:
        gpusim.jit(kernel, **options)[config](*args)
    message = str(info.value)
    assert isinstance(info.value, gpusim.KernelError)
    assert "\nHint: " in message and message.splitlines()[-1].startswith("Hint: ")
    return message


@pytest.mark.parametrize("schedule,seed", [("sequential", None), ("random", 1), ("random", 2)])
def test_missing_barrier_after_shared_load_is_a_race(schedule, seed):
    C = np.zeros((32, 32), dtype=np.float32)
    message = raises(
        gpusim.RaceError,
        K.matmul_no_sync_after_load,
        ((2, 2), (16, 16)),
        A32,
        A32,
        C,
        schedule=schedule,
        seed=seed,
    )
    assert "gpusim_kernels.py:" in message and "sA[" in message or "sB[" in message
    assert "wrote" in message and "read" in message and "block (" in message


def test_race_message_names_both_accesses_and_lines():
    C = np.zeros((32, 32), dtype=np.float32)
    message = raises(gpusim.RaceError, K.matmul_no_sync_after_load, ((2, 2), (16, 16)), A32, A32, C)
    assert message.startswith("block (0,0,0): thread (0,0,0) wrote sA[0, 0] at gpusim_kernels.py:")
    assert "`sA[ty, tx] = A[y, t * TILE + tx]`" in message
    assert "thread (1,0,0) read sA[0, 0]" in message and "`acc += sA[ty, k] * sB[k, tx]`" in message


def test_missing_barrier_before_tile_is_overwritten_is_a_race():
    C = np.zeros((32, 32), dtype=np.float32)
    message = raises(gpusim.RaceError, K.matmul_no_sync_before_overwrite, ((2, 2), (16, 16)), A32, A32, C)
    assert "wrote" in message and "read" in message


def test_barrier_inside_branch():
    message = raises(gpusim.BarrierError, K.barrier_in_branch, (1, 32), np.zeros(32))
    assert "16 threads (0,0,0)" in message and "have exited" in message and "barrier_in_branch" not in message


def test_early_return_before_barrier():
    message = raises(gpusim.BarrierError, K.early_return, (1, 64), np.zeros(64, dtype=np.float32), 40)
    assert "40 threads" in message and "24 threads (40,0,0)" in message and "exited" in message
    assert "cuda.syncthreads()" in message


def test_early_return_before_barrier_passes_when_no_thread_returns():
    a = np.arange(64, dtype=np.float32)
    gpusim.jit(K.early_return)[1, 64](a, 64)
    np.testing.assert_array_equal(a, 2 * np.arange(64))


def test_shared_histogram_without_atomics_is_a_race():
    data = np.arange(64, dtype=np.int32) % 4
    message = raises(gpusim.RaceError, K.histogram_shared_racy, (1, 64), data, np.zeros(16, dtype=np.int32))
    assert "local[0]" in message


def test_single_buffer_scan_is_a_race():
    a = np.arange(64, dtype=np.float32)
    message = raises(gpusim.RaceError, K.scan_single_buffer, (1, 64), a, np.zeros_like(a))
    assert "buf[" in message and "buf[t] += buf[t - offset]" in message


def test_negative_index_is_out_of_bounds():
    a = np.arange(64, dtype=np.float32)
    message = raises(gpusim.OutOfBoundsError, K.stencil_negative_index, (1, 64), a, np.zeros_like(a))
    assert "thread (0,0,0) read a[-1]" in message and "negative" in message
    assert "`out[i] = a[i - 1] + a[i]`" in message


def test_past_the_end_index_is_out_of_bounds():
    a = np.arange(50, dtype=np.float32)
    message = raises(
        gpusim.OutOfBoundsError,
        K.vector_add,
        (1, 64),
        np.arange(64, dtype=np.float32),
        a,
        np.zeros(64, dtype=np.float32),
    )
    assert "b[50]" in message and "past the end" in message


def doubles_in_place(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * 2


def test_a_write_into_a_read_only_argument_names_thread_element_and_line():
    """An argument whose NumPy writeable flag is off is read-only, as Numba types it; reads stay fast and
    counted, a non-contiguous one too, and schedules neither restore nor compare it."""
    for shape in ((4096,), (64, 64)):
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        a.flags.writeable = False
        message = raises(gpusim.KernelError, doubles_in_place, (a.size // 128, 128), a.reshape(-1))
        assert "thread (0,0,0) wrote a[0]" in message and "read-only NumPy array" in message
        assert "`a[i] = a[i] * 2`" in message
    strided = np.arange(64, dtype=np.float32)[::2]
    strided.flags.writeable = False
    out = np.zeros(32, np.float32)
    kernel = gpusim.jit(K.copy_coalesced)
    kernel[1, 32](strided, out)
    assert np.array_equal(out, strided) and kernel.report.global_loads == 32
    assert len(gpusim.run_schedules(K.copy_coalesced, (1, 32), strided, out)) > 1


def test_uninitialized_shared_read():
    message = raises(gpusim.UninitializedReadError, K.uninitialized_shared, (1, 64), np.zeros(64, np.float32))
    assert "thread (32,0,0) read buf[32]" in message


def test_two_blocks_writing_one_global_element_is_a_race():
    message = raises(gpusim.RaceError, K.every_block_writes_first, (2, 1), np.zeros(1))
    assert "block (1,0,0)" in message and "block (0,0,0)" in message and "out[0]" in message


def test_missing_syncwarp_in_warp_reduction_is_a_race():
    a = np.arange(32, dtype=np.float32)
    message = raises(gpusim.RaceError, K.warp_reduce_shared_no_syncwarp, (1, 32), a, np.zeros(1, np.float32))
    assert "syncwarp" in message


def test_shuffle_with_exited_lanes_is_a_barrier_error():
    a = np.arange(32, dtype=np.float32)
    message = raises(gpusim.BarrierError, K.shfl_after_early_return, (1, 32), a, np.zeros_like(a), 20)
    assert "exited" in message


def test_exception_in_kernel_names_thread_and_line():
    with pytest.raises(gpusim.KernelException) as info:
        gpusim.jit(K.divide_by_zero)[1, 8](np.zeros(8, dtype=np.int64))
    message = str(info.value)
    assert (
        "thread (3,0,0)" in message and "ZeroDivisionError" in message and "`a[i] = 1 // (i - 3)`" in message
    )
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_timeout_stops_a_runaway_kernel():
    with pytest.raises(gpusim.KernelTimeoutError):
        gpusim.jit(K.spin_forever, timeout=0.3)[1, 1](np.zeros(1))


@pytest.mark.parametrize(
    "config,fragment",
    [
        ((1, 1025), "at most 1024"),
        ((0, 32), "at least 1"),
        ((2.0, 32), "integer"),
        (((1, 1, 1, 1), 32), "1 to 3"),
        ((1, (32, -1)), "at least 1"),
    ],
)
def test_bad_launch_configurations(config, fragment):
    message = raises(gpusim.ResourceError, K.vector_add, config, np.zeros(4), np.zeros(4), np.zeros(4))
    assert fragment in message


def test_too_much_static_shared_memory():
    message = raises(gpusim.ResourceError, K.big_shared, (1, 1), np.zeros(1, np.float32))
    assert "48 KiB" in message and "52000 bytes" in message


def test_dynamic_shared_memory_beyond_launch_bytes():
    a = np.arange(32, dtype=np.float32)
    message = raises(gpusim.OutOfBoundsError, K.dynamic_shared_views, (1, 32, 0, 100), a, np.zeros_like(a))
    assert "past the end of the 100 bytes of dynamic shared memory the launch gave" in message
    assert "tile width" in message and "4th launch parameter" in message


def test_unsupported_argument_type():
    message = raises(gpusim.ResourceError, K.vector_add, (1, 4), [1, 2], np.zeros(4), np.zeros(4))
    assert "argument a has type list" in message


def test_fast_mode_skips_checks_and_runs_a_racy_kernel_to_the_end():
    C = np.zeros((32, 32), dtype=np.float32)
    k = gpusim.jit(K.matmul_no_sync_after_load, check=False)
    k[(2, 2), (16, 16)](A32, A32, C)
    assert k.report.blocks == 4 and k.report.barriers == 8


def test_timeout_keeps_an_outer_alarm():
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(True))
    try:
        signal.setitimer(signal.ITIMER_REAL, 3)  # far longer than the launch, even on a busy machine
        a = np.arange(64, dtype=np.float32)
        gpusim.jit(K.vector_add, timeout=5)[1, 64](a, a, np.zeros_like(a))
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 3
        for _ in range(100):  # wait for the outer alarm, however late the machine lets it fire
            if fired:
                break
            time.sleep(0.05)
        assert fired == [True]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


AFTER_A_THREADS_TIMEOUT = """
import sys, threading, time
from gpusim.errors import KernelTimeoutError
from gpusim.threadalarm import thread_alarm

def launch(seconds):
    try:
        with thread_alarm(0.01, time.monotonic()):
            time.sleep(seconds)  # C code: the timeout arrives after it, or in the alarm's own exit
    except KernelTimeoutError:
        pass

for seconds in (0.1, 0.0):
    worker = threading.Thread(target=launch, args=(seconds,))
    worker.start()
    worker.join()
sys.setprofile(lambda *args: None)  # as the checks' guard of learner code does
print(sum(range(3)))
"""


def test_a_timeout_outside_the_main_thread_leaves_later_profiled_calls_running():
    """A launch's timeout in another thread is an asynchronous exception; withdrawing one left CPython's eval
    breaker set, after which a function called under a profile function never started (a hung check)."""
    run = subprocess.run([sys.executable, "-c", AFTER_A_THREADS_TIMEOUT], capture_output=True, text=True,
                         timeout=60, cwd=Path(gpusim.__file__).parent.parent)
    assert run.stdout.strip() == "3", run.stderr[-2000:]


def test_threads_at_different_barriers():
    message = raises(gpusim.BarrierError, K.different_barriers, (1, 8), np.zeros(8))
    assert "4 threads (0,0,0), (2,0,0), (4,0,0), (6,0,0) wait at gpusim_kernels.py:" in message
    assert "4 threads (1,0,0), (3,0,0), (5,0,0), (7,0,0) wait at gpusim_kernels.py:" in message


def test_uninitialized_dynamic_shared_read():
    message = raises(gpusim.UninitializedReadError, K.dynamic_uninitialized, (1, 8, 0, 32), np.zeros(8))
    assert "thread (0,0,0) read buf[0]" in message
