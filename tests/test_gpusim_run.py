"""gpusim runs unchanged Numba kernels with CUDA's results: one small kernel per API item."""

import linecache

import gpusim_kernels as K
import numpy as np
import pytest
import torch
from numba import cuda

import gpusim


@pytest.fixture(params=[True, False], ids=["checked", "fast"])
def check(request):
    return request.param


def test_vector_add_matches_numpy(check):
    a, b = np.arange(100, dtype=np.float32), np.ones(100, dtype=np.float32)
    out = np.zeros(100, dtype=np.float32)
    gpusim.jit(K.vector_add, check=check)[4, 32](a, b, out)
    np.testing.assert_array_equal(out, a + b)


def test_torch_tensors_are_written_in_place_and_scalars_pass():
    a = torch.arange(50, dtype=torch.float32)
    out = torch.zeros(50)
    gpusim.jit(K.scale_add)[2, 32](a, 2.0, 1, out)
    assert torch.equal(out, 2 * a + 1)


def test_non_contiguous_argument_is_copied_back():
    base = np.zeros((40, 2), dtype=np.float32)
    a = np.arange(40, dtype=np.float32)
    gpusim.jit(K.vector_add)[2, 32](a, a, base[:, 1])
    np.testing.assert_array_equal(base[:, 1], 2 * a)
    assert not base[:, 0].any()


def test_thread_block_grid_indices_in_three_dimensions(check):
    grid, block = (2, 3, 2), (4, 2, 3)
    out = np.zeros((6, 6, 8, 5), dtype=np.int64)
    gpusim.jit(K.index_report, check=check)[grid, block](out)
    z, y, x = np.meshgrid(np.arange(6), np.arange(6), np.arange(8), indexing="ij")
    np.testing.assert_array_equal(out[..., 0], x % 4 + 10 * (y % 2) + 100 * (z % 3))
    np.testing.assert_array_equal(out[..., 1], x // 4 + 10 * (y // 2) + 100 * (z // 3))
    assert (out[..., 2] == 4 + 20 + 300).all() and (out[..., 3] == 2 + 30 + 200).all()
    assert (out[..., 4] == 8 + 60 + 600).all()


def test_launch_with_stream_and_dynamic_shared_bytes_and_aliasing_views(check):
    n = 32
    a = np.arange(n, dtype=np.float32) * 10
    out = np.zeros(n, dtype=np.float32)
    gpusim.jit(K.dynamic_shared_views, check=check)[1, n, 0, 2 * n * 4](a, out)
    rolled = (np.arange(n) + 1) % n
    np.testing.assert_array_equal(out, a[rolled] + rolled)


def test_shared_memory_and_barrier(check):
    a = np.arange(128, dtype=np.int32)
    out = np.zeros_like(a)
    gpusim.jit(K.block_reverse, check=check)[2, 64](a, out)
    np.testing.assert_array_equal(out, np.concatenate([a[:64][::-1], a[64:][::-1]]))


def test_tree_reduction(check):
    a = np.random.default_rng(0).random(1000).astype(np.float32)
    out = np.zeros(8, dtype=np.float32)
    gpusim.jit(K.block_sum, check=check)[8, 128](a, out)
    np.testing.assert_allclose(out.sum(), a.sum(), rtol=1e-5)


def test_kernel_factory_with_device_function_matches_numpy(check):
    rng = np.random.default_rng(1)
    A, B = rng.random((32, 48), dtype=np.float32), rng.random((48, 32), dtype=np.float32)
    C = np.zeros((32, 32), dtype=np.float32)
    gpusim.jit(K.make_matmul_tiled(16), check=check)[(2, 2), (16, 16)](A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)


def test_barrier_inside_device_function(check):
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    gpusim.jit(K.rotate_via_device_barrier, check=check)[1, 64](a, out)
    np.testing.assert_array_equal(out, np.roll(a, -1))


def test_syncthreads_count_and_or(check):
    a = np.array([1] * 10 + [0] * 22, dtype=np.int32)
    out = np.zeros(3, dtype=np.int32)
    gpusim.jit(K.barrier_predicates, check=check)[1, 32](a, out)
    assert out.tolist() == [10, 0, 1]


def test_local_and_const_arrays(check):
    a = np.array([1, 2, 3, 4], dtype=np.float32)
    out = np.zeros(8, dtype=np.float32)
    gpusim.jit(K.local_and_const, check=check)[1, 8](a, out)
    np.testing.assert_array_equal(out, 20 + np.arange(8))


def test_a_constant_array_is_one_copy_for_all_threads_of_a_launch():
    a = np.array([1, 2, 3, 4], dtype=np.float32)
    out = np.zeros(256, dtype=np.float32)
    kernel = gpusim.jit(K.local_and_const)
    kernel[2, 128](a, out)  # more threads than gpusim tracks distinct arrays
    np.testing.assert_array_equal(out, 20 + np.arange(256))
    assert kernel.report.global_loads == 4 * 256  # each thread reads the four constants


def test_atomics(check):
    values = np.arange(1, 11, dtype=np.int64)
    out = np.array([0, 0, -100, 100, 0, 0, 0, 0], dtype=np.int64)
    gpusim.jit(K.atomics, check=check)[1, 10](values, out)
    assert out[:4].tolist() == [55, -55, 10, 1]
    assert out[4] == 10 % 6  # inc wraps to 0 after reaching 5
    assert out[5] == 100 - 10 + 1 or out[5] == 91
    assert out[6] == 7 and out[7] == 1


def test_shared_histogram_with_atomics(check):
    data = np.random.default_rng(2).integers(0, 100, 500).astype(np.int32)
    bins = np.zeros(16, dtype=np.int32)
    gpusim.jit(K.histogram_shared_atomic, check=check)[4, 128](data, bins)
    np.testing.assert_array_equal(bins, np.bincount(data % 16, minlength=16))


def test_math_functions_and_numba_scalar_types(check):
    x = np.linspace(0, 4, 50).astype(np.float32)
    out = np.zeros_like(x)
    gpusim.jit(K.math_and_types, check=check)[1, 64](x, out)
    expected = np.sqrt(x) + np.exp(np.float32(0.5) * x) + np.floor(x)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_double_buffer_scan(check):
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    gpusim.jit(K.scan_double_buffer, check=check)[1, 64](a, out)
    np.testing.assert_array_equal(out, np.cumsum(a))


def test_warp_shuffle_reduction_and_scan(check):
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(2, dtype=np.float32)
    gpusim.jit(K.warp_reduce_shfl, check=check)[1, 64](a, out)
    np.testing.assert_array_equal(out, [a[:32].sum(), a[32:].sum()])
    scan = np.zeros_like(a)
    gpusim.jit(K.warp_scan_shfl_up, check=check)[2, 32](a, scan)
    np.testing.assert_array_equal(scan, np.concatenate([np.cumsum(a[:32]), np.cumsum(a[32:])]))


def test_warp_vote_and_shuffle_variants(check):
    a = np.array([1, -1] * 16 + [1] * 16, dtype=np.int64)
    out = np.zeros((48, 7), dtype=np.int64)
    gpusim.jit(K.warp_misc, check=check)[1, 48](a, out)
    lanes = np.arange(48) % 32
    assert (out[:, 0] == a[np.where(np.arange(48) < 32, 3, 35)]).all()
    assert (out[:, 1] == a[np.arange(48) ^ 1]).all()
    assert (out[:32, 2] == 0x55555555).all() and (out[32:, 2] == 0xFFFF).all()
    assert (out[:32, 3] == 0).all() and (out[32:, 3] == 1).all()
    assert (out[:, 4] == 1).all()
    assert (out[:32, 5] == 0xFFFFFFFF).all() and (out[32:, 5] == 0xFFFF).all()
    assert (out[:, 6] == lanes).all()


def test_syncwarp_orders_a_warp_reduction_in_shared_memory(check):
    a = np.arange(32, dtype=np.float32)
    out = np.zeros(1, dtype=np.float32)
    gpusim.jit(K.warp_reduce_shared_syncwarp, check=check)[1, 32](a, out)
    assert out[0] == a.sum()


def test_plain_python_function_using_cuda_api(check):
    a = np.arange(32, dtype=np.float32)
    out = np.zeros_like(a)
    gpusim.jit(K.plain_copy, check=check)[1, 32](a, out)
    np.testing.assert_array_equal(out, a)


def test_random_schedule_gives_the_same_results():
    rng = np.random.default_rng(3)
    A, B = rng.random((32, 32), dtype=np.float32), rng.random((32, 32), dtype=np.float32)
    for seed in range(3):
        C = np.zeros((32, 32), dtype=np.float32)
        gpusim.jit(K.matmul_tiled, schedule="random", seed=seed)[(2, 2), (16, 16)](A, B, C)
        np.testing.assert_allclose(C, A @ B, rtol=1e-5)


def test_report_prints_as_text_and_html_and_dict():
    a = np.arange(64, dtype=np.float32)
    k = gpusim.jit(K.vector_add)
    k[2, 32](a, a, np.zeros_like(a))
    report = k.report
    assert isinstance(report, gpusim.Report)
    assert "global_loads" in repr(report) and "<table>" in report._repr_html_()
    values = report.as_dict()
    assert values["blocks"] == 2 and values["threads"] == 64 and values["global_loads"] == 128
    fast = gpusim.jit(K.vector_add, check=False)
    fast[2, 32](a, a, np.zeros_like(a))
    assert fast.report.threads == 64 and fast.report.global_loads is None


def test_warp_size_constant():
    assert gpusim.WARP_SIZE == 32


def test_record_keeps_every_access_with_its_line():
    a = np.arange(4, dtype=np.int32)
    k = gpusim.jit(K.block_reverse, record=True)
    k[1, 4](a, np.zeros_like(a))
    reads = [acc for acc in k.trace if acc.array == "buf" and acc.kind == "read"]
    assert len(k.trace) == 4 * 4 and len(reads) == 4
    first = next(acc for acc in reads if acc.thread == (0, 0, 0))
    assert first == gpusim.Access((0, 0, 0), (0, 0, 0), "buf", 3, "read", first.line, 1)
    assert "buf[cuda.blockDim.x - 1 - t]" in linecache.getline(K.__file__, first.line)


def test_record_keeps_shared_values_at_the_end_of_every_phase():
    a = np.arange(8, dtype=np.int32)
    k = gpusim.jit(K.block_reverse, record=True)
    k[2, 4](a, np.zeros_like(a))
    assert [(s.block, s.epoch) for s in k.snapshots] == [((0, 0, 0), 0), ((0, 0, 0), 1),
                                                         ((1, 0, 0), 0), ((1, 0, 0), 1)]
    assert list(k.snapshots[2].arrays["buf"][:4]) == [4, 5, 6, 7]
    assert gpusim.jit(K.block_reverse).snapshots is None


def test_interrupt_leaves_no_hang_and_next_launch_works():
    def interrupted(a):
        cuda.syncthreads()
        if cuda.threadIdx.x == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        gpusim.jit(interrupted)[1, 32](np.zeros(1))
    test_vector_add_matches_numpy(True)


def test_narrow_numpy_indices_and_device_function_accesses():
    """int32 indices read from an array take the general path, with the same results and counts."""
    data = np.array([3, 1, 2, 0] * 16, dtype=np.int32)
    bins = np.zeros(16, dtype=np.int32)
    k = gpusim.jit(K.histogram_shared_atomic)
    k[1, 64](data, bins)
    assert bins[:4].tolist() == [16, 16, 16, 16] and k.report.global_loads == 64
