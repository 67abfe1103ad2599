"""Part 8's GPU measurement: the double-buffered matmuls (versions 11 and 12) beside the Part 5 ladder,
checked on the CPU before a GPU runs them."""

import subprocess
import sys

import numpy as np
import pytest
from notebook_runs import ROOT

import gpusim
from bench import gpu_matmul
from course.kernels import matmul as mm


@pytest.mark.parametrize("only,expected", [
    (["4", "11"], ["4 factory TILE=16", "4 factory TILE=32", "11 double-buffered TILE=16",
                   "11 double-buffered TILE=32"]),
    (["1"], ["1 naive"]),
    (["double"], ["11 double-buffered TILE=16", "11 double-buffered TILE=32",
                  "12 version 10 double-buffered"]),
    (["17"], ["17 warp tiles, 256x128x8, 16x8/thread"]),
])
def test_only_picks_versions_by_number_or_name(only, expected):
    names = [name for name, *_ in gpu_matmul.versions(False)]
    assert [name for name in names if gpu_matmul.chosen(name, only)] == expected


def run_checked(launch, m, k, n, grid, block):
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    kernel = gpusim.jit(launch.kernel)
    kernel[grid, block](a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-5)
    return kernel.report


@pytest.mark.parametrize("tile", [8, 16])
def test_double_buffered_factory_is_race_free_with_one_barrier_per_tile(tile):
    tiles = 5
    single = run_checked(mm.make_tiled_matmul(tile), 2 * tile, tiles * tile, 2 * tile, (2, 2), (tile, tile))
    double = run_checked(mm.make_double_buffered_matmul(tile), 2 * tile, tiles * tile, 2 * tile, (2, 2),
                         (tile, tile))
    assert single.max_block_barriers == 2 * tiles and double.max_block_barriers == tiles + 1
    assert double.global_loads == single.global_loads


def test_double_buffered_register_tiled_kernel_halves_the_barriers():
    steps = 5
    v10 = mm.make_regtile_matmul_vec(128, 128, 8, 8, 8, prefetch=True, UNROLL=2)
    v12 = mm.make_regtile_matmul_vec(128, 128, 8, 8, 8, prefetch=True, UNROLL=2, double_buffer=True)
    single = run_checked(v10, 128, 8 * steps, 128, (1, 1), 256)
    double = run_checked(v12, 128, 8 * steps, 128, (1, 1), 256)
    assert single.max_block_barriers == 2 * steps + 1
    assert double.max_block_barriers == 1 + 2 * ((steps + 1) // 2)


@pytest.mark.parametrize("shape", [
    dict(),  # 8 warps of 64x32, 8x8 per thread, 2 blocks per SM
    # version 17 as measured: 16x8 per thread, 1 block per SM, each step's k loop written out
    dict(BM=256, WM=64, WN=64, TM=16, max_registers=None, pipelined=True),
])
def test_warp_tiled_kernel_is_race_free_with_one_barrier_per_step(shape):
    steps = 5
    v17 = mm.make_warptile_matmul(**shape)
    bm, bk = shape.get("BM", 128), shape.get("BK", 8)
    report = run_checked(v17, 2 * bm, bk * steps, 256, (2, 2), v17.threads)
    assert report.max_block_barriers == 1 + 2 * ((steps + 1) // 2)


def test_dry_run_of_the_lesson_command_runs_the_chosen_versions_on_the_simulator():
    done = subprocess.run([sys.executable, "bench/gpu_matmul.py", "--dry-run", "--n", "32", "--only", "4,11"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "max error" in line]
    assert [line.split("  ")[0].strip() for line in lines] == [
        "4 factory TILE=16", "4 factory TILE=32", "11 double-buffered TILE=16", "11 double-buffered TILE=32"]
