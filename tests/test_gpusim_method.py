"""What gpusim counts and refuses so that checks can enforce a method, not just values: work and span
counters, shared-memory sizes, module-level arrays as read-only constants, the default timeout, the
shared-memory limit, returned values, barrier mismatches without checks, GPU-like math, and messages
that point at the right fix."""

import math
import sys
import types

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim import launch, sites

N = 100
THREADS = 32


@cuda.jit
def serial_block_sum(a, partial):
    """Thread 0 adds the block's values one after another: right answer, no parallelism."""
    s = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    if t == 0:
        total = 0.0
        for j in range(32):
            total += s[j]
        partial[cuda.blockIdx.x] = total


@cuda.jit
def tree_block_sum(a, partial):
    s = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = 16
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


def _sum(kernel, **options):
    a = np.arange(N, dtype=np.float32)
    partial = np.zeros(-(-N // THREADS), np.float32)
    k = gpusim.jit(kernel, **options)
    k[len(partial), THREADS](a, partial)
    np.testing.assert_allclose(partial, [a[i:i + 32].sum() for i in range(0, N, 32)])
    return k.report


def test_the_busiest_thread_shows_a_serial_sum():
    serial, tree = _sum(serial_block_sum), _sum(tree_block_sum)
    assert serial.max_thread_accesses == 1 + 1 + 32 + 1  # its load, its store, 32 reads, the result
    assert tree.max_thread_accesses == 2 + 5 * 3 + 1 + 1  # load, store, 5 steps of read-read-write, s[0], out
    assert serial.active_threads == tree.active_threads == 4 * 32
    assert serial.max_block_barriers == 1 and tree.max_block_barriers == 6
    assert tree.barriers == 4 * 6


def test_shared_memory_sizes_are_reported():
    report = _sum(tree_block_sum)
    assert report.static_shared_bytes == 32 * 4 and report.dynamic_shared_bytes == 0
    unchecked = _sum(tree_block_sum, check=False)
    assert unchecked.static_shared_bytes == 32 * 4 and unchecked.max_block_barriers == 6
    assert unchecked.max_thread_accesses is None and unchecked.global_loads is None


@cuda.jit
def scale_by_dynamic(a, out):
    buf = cuda.shared.array(0, np.float32)
    t = cuda.threadIdx.x
    buf[t] = a[t]
    cuda.syncthreads()
    out[t] = buf[THREADS - 1 - t]


def test_dynamic_shared_bytes_are_the_launch_parameter():
    a = np.arange(THREADS, dtype=np.float32)
    out = np.zeros_like(a)
    k = gpusim.jit(scale_by_dynamic)
    k[1, THREADS, 0, 4 * THREADS](a, out)
    assert k.report.dynamic_shared_bytes == 128 and k.report.static_shared_bytes == 0
    np.testing.assert_array_equal(out, a[::-1])


def test_combine_sums_counts_and_keeps_the_largest_sizes():
    first = {"global_loads": 10, "max_thread_accesses": 7, "dynamic_shared_bytes": 256, "ratio": 0.5}
    second = {"global_loads": 5, "max_thread_accesses": 9, "dynamic_shared_bytes": 128, "ratio": None}
    totals = gpusim.report.combine(gpusim.report.combine({}, first), second)
    assert totals == {"global_loads": 15, "max_thread_accesses": 9, "dynamic_shared_bytes": 256}


TABLE = np.arange(8, dtype=np.float32)


@cuda.jit
def read_table(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = TABLE[i % 8] * 2


@cuda.jit
def write_table(out):
    i = cuda.grid(1)
    if i < 8:
        TABLE[i] = out[i]


def test_module_level_arrays_are_read_only_constants_counted_as_global_reads():
    out = np.zeros(16, np.float32)
    k = gpusim.jit(read_table)
    k[1, 16](out)
    np.testing.assert_array_equal(out, 2 * np.concatenate([TABLE, TABLE]))
    assert k.report.global_loads == 16 and k.report.global_stores == 16


@pytest.mark.parametrize("check", [True, False])
def test_writing_a_module_level_array_is_refused(check):
    with pytest.raises(gpusim.KernelError) as info:
        gpusim.jit(write_table, check=check)[1, 8](np.ones(8, np.float32))
    assert "read-only" in str(info.value) or "read-only" in str(info.value.__cause__)
    assert "TABLE" in str(info.value)
    np.testing.assert_array_equal(TABLE, np.arange(8))


def make_scaler(weights):
    @cuda.jit
    def scale(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = weights[i]
            weights[i] = 0.0

    return scale


def test_captured_arrays_are_constants_too():
    weights = np.ones(4, np.float32)
    with pytest.raises(gpusim.KernelError, match="weights"):
        gpusim.jit(make_scaler(weights))[1, 4](np.zeros(4, np.float32))
    assert weights.tolist() == [1, 1, 1, 1]


def test_launches_have_a_default_timeout():
    assert gpusim.jit(tree_block_sum).timeout == launch.DEFAULT_TIMEOUT_S > 0


@cuda.jit
def spin(a):
    while a[0] == 0:
        pass


def test_a_spinning_kernel_stops_at_its_timeout():
    with pytest.raises(gpusim.KernelTimeoutError):
        gpusim.jit(spin, timeout=0.5)[1, 1](np.zeros(1, np.float32))


def test_dynamic_shared_memory_above_48_kib_needs_an_opt_in():
    a, out = np.zeros(THREADS, np.float32), np.zeros(THREADS, np.float32)
    with pytest.raises(gpusim.ResourceError, match="max_dynamic_shared_bytes"):
        gpusim.jit(scale_by_dynamic)[1, THREADS, 0, 200 * 1024](a, out)
    k = gpusim.jit(scale_by_dynamic, max_dynamic_shared_bytes=200 * 1024)
    k[1, THREADS, 0, 200 * 1024](a, out)
    assert k.report.dynamic_shared_bytes == 200 * 1024
    with pytest.raises(gpusim.ResourceError, match="227 KiB"):
        gpusim.jit(scale_by_dynamic, max_dynamic_shared_bytes=300 * 1024)


@cuda.jit
def static_and_dynamic(out):
    s = cuda.shared.array(8192, np.float32)  # 32 KiB static
    d = cuda.shared.array(0, np.float32)
    s[0] = 1.0
    d[0] = 2.0
    out[0] = s[0] + d[0]


def test_static_and_dynamic_shared_memory_share_one_limit():
    out = np.zeros(1, np.float32)
    gpusim.jit(static_and_dynamic)[1, 1, 0, 16 * 1024](out)
    with pytest.raises(gpusim.ResourceError, match="static"):
        gpusim.jit(static_and_dynamic)[1, 1, 0, 17 * 1024](out)


@cuda.jit
def returns_a_value(a):
    a[cuda.grid(1)] = 1.0
    return a[0]


@pytest.mark.parametrize("check", [True, False])
def test_a_kernel_that_returns_a_value_is_refused(check):
    with pytest.raises(gpusim.KernelError, match="cannot return a value"):
        gpusim.jit(returns_a_value, check=check)[1, 4](np.zeros(4, np.float32))


@cuda.jit
def divergent_barriers(a):
    if cuda.threadIdx.x < 16:
        cuda.syncthreads()
        a[cuda.threadIdx.x] = 1.0
    else:
        cuda.syncthreads()
        a[cuda.threadIdx.x] = 2.0


@cuda.jit
def early_exit_before_barrier(a):
    if cuda.threadIdx.x >= 16:
        return
    cuda.syncthreads()
    a[cuda.threadIdx.x] = 1.0


@pytest.mark.parametrize("kernel", [divergent_barriers, early_exit_before_barrier])
def test_barrier_mismatches_are_errors_without_checks_too(kernel):
    with pytest.raises(gpusim.BarrierError):
        gpusim.jit(kernel, check=False)[1, 32](np.zeros(32, np.float32))


@cuda.jit
def gray_swapped(out, width):
    x, y = cuda.grid(2)
    if x < width:
        out[x] = y + 1.0  # every row writes the same elements: an index bug, not a missing barrier


def test_two_threads_writing_one_element_is_an_index_conflict_not_a_barrier():
    with pytest.raises(gpusim.WriteConflictError) as info:
        gpusim.jit(gray_swapped)[(1, 1), (4, 2)](np.zeros(4, np.float32), 4)
    message = str(info.value)
    assert "threads (0,0,0) and (0,1,0) both wrote out[0]" in message
    assert "index" in message and "syncthreads" not in message


def test_two_blocks_writing_one_element_on_one_line_is_an_index_conflict():
    with pytest.raises(gpusim.WriteConflictError) as info:
        gpusim.jit(gray_swapped)[(1, 2), (4, 1)](np.zeros(4, np.float32), 4)
    assert "block (0,0,0)" in str(info.value) and "nothing orders two blocks" in str(info.value)


@cuda.jit
def counts_without_atomics(values, counts):
    i = cuda.grid(1)
    if i < values.size:
        counts[values[i]] += 1


def test_a_plain_update_by_many_threads_points_to_atomics():
    with pytest.raises(gpusim.WriteConflictError, match="cuda.atomic.add"):
        gpusim.jit(counts_without_atomics)[1, 8](np.zeros(8, np.int32), np.zeros(2, np.int32))


@cuda.jit
def log_and_exp(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.log(x[i]) + math.exp(1000.0 * x[i])


def test_math_gives_ieee_results_as_a_gpu_does():
    out = np.zeros(2, np.float64)
    gpusim.jit(log_and_exp)[1, 2](np.array([0.0, 1.0]), out)
    assert out[0] == -math.inf and out[1] == math.inf


def test_places_are_named_as_a_learner_knows_them(monkeypatch):
    assert sites.place_name("<cell 3>", 4) == "cell 3, line 4"
    assert sites.place_name("<05_tiled_matmul cell 12>", 2) == "05_tiled_matmul cell 12, line 2"
    assert sites.place_name("/x/y/kernels.py", 9) == "kernels.py:9"

    class Compiler:
        @staticmethod
        def format_code_name(name):
            return ("Cell", "In[7]") if name == "/tmp/ipykernel_1/3036957314.py" else None

    shell = types.SimpleNamespace(compile=Compiler())
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert sites.place_name("/tmp/ipykernel_1/3036957314.py", 4) == "cell In[7], line 4"


@cuda.jit
def butterfly_sum(a, out):
    value = a[cuda.threadIdx.x]
    offset = 16
    while offset > 0:
        value += cuda.shfl_xor_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    if cuda.threadIdx.x == 0:
        out[0] = value


@cuda.jit
def lane_by_lane_sum(a, out):
    value = a[cuda.threadIdx.x]
    total = value
    for lane in range(1, 32):
        total += cuda.shfl_sync(0xFFFFFFFF, value, lane)
    if cuda.threadIdx.x == 0:
        out[0] = total


@pytest.mark.parametrize("kernel, collectives", [(butterfly_sum, 5), (lane_by_lane_sum, 31)])
@pytest.mark.parametrize("check", [True, False])
def test_warp_collectives_of_the_busiest_thread_are_counted(kernel, collectives, check):
    a, out = np.arange(32, dtype=np.float32), np.zeros(1, np.float32)
    k = gpusim.jit(kernel, check=check)
    k[1, 32](a, out)
    assert out[0] == a.sum() and k.report.max_thread_collectives == collectives


@cuda.jit
def row_reductions(a, out):
    s = cuda.shared.array(8, np.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    if t == 0:
        out[0] = s.sum()
        out[1] = s.argmax()
        out[2] = s.mean()
        scratch = cuda.local.array(4, np.float32)
        for j in range(4):
            scratch[j] = j + 1
        out[3] = scratch.prod()


def test_array_reductions_numba_compiles_run_and_count_as_the_threads_reads():
    a, out = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.float32), np.zeros(4, np.float32)
    k = gpusim.jit(row_reductions)
    k[1, 8](a, out)
    assert out.tolist() == [31.0, 5.0, 31 / 8, 24.0]
    assert k.report.max_thread_accesses == 2 + 3 * 8 + 4  # its load and store, three reductions, four writes
