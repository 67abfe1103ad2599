"""The counters reproduce textbook numbers exactly."""

import gpusim_kernels as K
import numpy as np

import gpusim


def report(kernel, config, *args):
    k = gpusim.jit(kernel)
    k[config](*args)
    return k.report


def test_naive_matmul_reads_2n_cubed_elements():
    n = 32
    A = np.ones((n, n), dtype=np.float32)
    r = report(K.matmul_naive, ((2, 2), (16, 16)), A, A, np.zeros_like(A))
    assert r.global_loads == 2 * n**3 and r.global_stores == n * n
    assert r.shared_loads == 0 and r.barriers == 0


def test_tiled_matmul_reads_2n_cubed_over_tile_elements():
    n, tile = 32, 16
    A = np.ones((n, n), dtype=np.float32)
    r = report(K.make_matmul_tiled(tile), ((2, 2), (tile, tile)), A, A, np.zeros_like(A))
    assert r.global_loads == 2 * n**3 // tile
    assert r.shared_loads == 2 * n**3 and r.shared_stores == 2 * n**3 // tile
    assert r.blocks == 4 and r.threads == n * n and r.barriers == 4 * 2 * (n // tile)
    assert r.bank_conflicts == 0


def test_coalesced_copy_touches_8x_fewer_sectors_than_a_strided_one():
    n = 256
    coalesced = report(K.copy_coalesced, (n // 64, 64), np.ones(n, np.float32), np.zeros(n, np.float32))
    strided = report(
        K.copy_strided, (n // 64, 64), np.ones((n, 32), np.float32), np.zeros((n, 32), np.float32)
    )
    assert coalesced.global_loads == strided.global_loads == n
    assert coalesced.global_sectors == 2 * (n // 32) * 4
    assert strided.global_sectors == 2 * n
    assert strided.global_sectors == 8 * coalesced.global_sectors
    assert coalesced.coalescing_efficiency == 1.0 and strided.coalescing_efficiency == 0.125


def test_column_reads_of_a_32x32_tile_conflict_and_padding_removes_it():
    src = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    dst = np.zeros_like(src)
    plain = report(K.make_transpose_tile(0), (1, (32, 32)), src, dst)
    np.testing.assert_array_equal(dst, src.T)
    padded = report(K.make_transpose_tile(1), (1, (32, 32)), src, dst)
    np.testing.assert_array_equal(dst, src.T)
    assert plain.bank_conflicts == 32 * 31
    assert padded.bank_conflicts == 0
    assert plain.shared_requests == padded.shared_requests == 64


def test_broadcast_is_not_a_bank_conflict():
    a = np.arange(64, dtype=np.int32)
    r = report(K.block_reverse, (1, 64), a, np.zeros_like(a))
    assert r.bank_conflicts == 0 and r.shared_loads == r.shared_stores == 64


def test_atomics_are_counted_apart_from_loads_and_stores():
    data = np.arange(64, dtype=np.int32)
    r = report(K.histogram_shared_atomic, (1, 64), data, np.zeros(16, np.int32))
    assert r.shared_atomics == 64 and r.global_atomics == 16 and r.global_loads == 64
