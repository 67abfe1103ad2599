"""gpusim's counters, results and error messages stay exactly what they were before the speed work, on the
vector engine and on the thread engine.

tests/gpusim_golden.json was written by the simulator before it ran barrier-only kernels as generators and
before its checker was vectorised further (`python tests/test_gpusim_golden.py --write` rewrites it; do that
only for a deliberate change of a counter or a message; local_and_const's entry was rewritten when
`cuda.const.array_like` became one copy per launch: 66 global sectors became 6). Every kernel also runs
with the generator path switched off, and with no rewriting at all, so every way of running threads is
held to the same record.
"""

import hashlib
import json
import sys
from pathlib import Path

import gpusim_kernels as K
import numpy as np
import pytest

import gpusim
import gpusim.generators
import gpusim.launch

GOLDEN = Path(__file__).with_name("gpusim_golden.json")


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).random(shape, dtype=np.float32)


def _zeros(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


def cases():
    """{name: (kernel, launch config, function that makes the arguments)}: correct and buggy kernels."""
    ints = np.random.default_rng(3).integers(0, 50, 300).astype(np.int32)
    signs = np.where(np.arange(64) % 3 == 0, -1.0, 1.0).astype(np.float32)
    return {
        "vector_add": (K.vector_add, (4, 64), lambda: [_f32(200), _f32(200, seed=1), _zeros(200)]),
        "block_reverse": (K.block_reverse, (2, 64),
                          lambda: [np.arange(128, dtype=np.int32), np.zeros(128, np.int32)]),
        "block_sum": (K.block_sum, (2, 128), lambda: [_f32(200), _zeros(2)]),
        "matmul_naive": (K.matmul_naive, ((2, 2), (16, 16)),
                         lambda: [_f32(32, 32), _f32(32, 32, seed=1), _zeros(32, 32)]),
        "matmul_tiled": (K.matmul_tiled, ((2, 3), (16, 16)),
                         lambda: [_f32(48, 32), _f32(32, 32, seed=1), _zeros(48, 32)]),
        "histogram": (K.histogram_shared_atomic, (3, 128), lambda: [ints, np.zeros(16, np.int32)]),
        "scan": (K.scan_double_buffer, (1, 64), lambda: [_f32(64), _zeros(64)]),
        "math": (K.math_and_types, (4, 64), lambda: [_f32(200), _zeros(200)]),
        "transpose_pad0": (K.make_transpose_tile(0), (1, (32, 32)),
                           lambda: [_f32(32, 32), _zeros(32, 32)]),
        "transpose_pad1": (K.make_transpose_tile(1), (1, (32, 32)),
                           lambda: [_f32(32, 32), _zeros(32, 32)]),
        "copy_strided": (K.copy_strided, (4, 64),
                         lambda: [_f32(256, 32), _zeros(256, 32)]),
        "dynamic_views": (K.dynamic_shared_views, (1, 32, 0, 256),
                          lambda: [_f32(32), _zeros(32)]),
        "local_and_const": (K.local_and_const, (1, 16), lambda: [_f32(4), _zeros(16)]),
        "device_barrier": (K.rotate_via_device_barrier, (1, 64), lambda: [_f32(64), _zeros(64)]),
        "predicates": (K.barrier_predicates, (1, 64), lambda: [signs, np.zeros(3, np.int32)]),
        "atomics": (K.atomics, (2, 32), lambda: [np.arange(64, dtype=np.int32), np.zeros(8, np.int32)]),
        "warp_reduce": (K.warp_reduce_shfl, (2, 64), lambda: [_f32(128), _zeros(4)]),
        "warp_syncwarp": (K.warp_reduce_shared_syncwarp, (1, 32), lambda: [_f32(32), _zeros(1)]),
        "race_after_load": (K.matmul_no_sync_after_load, ((2, 2), (16, 16)),
                            lambda: [_f32(32, 32), _f32(32, 32, seed=1), _zeros(32, 32)]),
        "race_before_overwrite": (K.matmul_no_sync_before_overwrite, ((2, 2), (16, 16)),
                                  lambda: [_f32(32, 32), _f32(32, 32, seed=1), _zeros(32, 32)]),
        "barrier_in_branch": (K.barrier_in_branch, (1, 32), lambda: [np.zeros(32)]),
        "early_return": (K.early_return, (2, 64), lambda: [_f32(128), 100]),
        "histogram_racy": (K.histogram_shared_racy, (3, 128), lambda: [ints, np.zeros(16, np.int32)]),
        "scan_single_buffer": (K.scan_single_buffer, (1, 64), lambda: [_f32(64), _zeros(64)]),
        "negative_index": (K.stencil_negative_index, (1, 32), lambda: [_f32(32), _zeros(32)]),
        "uninitialized": (K.uninitialized_shared, (1, 64), lambda: [_zeros(64)]),
        "blocks_write_first": (K.every_block_writes_first, (4, 32), lambda: [np.zeros(4, np.int32)]),
        "different_barriers": (K.different_barriers, (1, 64), lambda: [_zeros(64)]),
        "dynamic_uninitialized": (K.dynamic_uninitialized, (1, 32, 0, 256), lambda: [_zeros(32)]),
        "no_syncwarp": (K.warp_reduce_shared_no_syncwarp, (1, 32), lambda: [_f32(32), _zeros(1)]),
        "divide_by_zero": (K.divide_by_zero, (1, 8), lambda: [np.zeros(8, dtype=np.int64)]),
    }


def outcome(kernel, config, make_args, check):
    """What one launch gives: its report (or error) and a digest of its array arguments afterwards."""
    args = make_args()
    launch = gpusim.jit(kernel, check=check)
    result = {}
    try:
        launch[config](*args)
        result["report"] = launch.report.as_dict()
    except gpusim.KernelError as error:
        result["error"] = f"{type(error).__name__}: {error}"
    digest = hashlib.sha256()
    for arg in args:
        if isinstance(arg, np.ndarray):
            digest.update(arg.tobytes())
    result["arrays"] = digest.hexdigest()[:16]
    return result


def record():
    return {f"{name} check={check}": outcome(*case, check)
            for name, case in cases().items() for check in (True, False)}


@pytest.fixture(scope="module")
def golden():
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("mode", ["shipped", "threads", "greenlets", "unchanged"])
def test_counters_results_and_messages_match_the_record(golden, mode, monkeypatch):
    """shipped: as gpusim runs kernels (the vector engine where it can); threads: the thread engine alone
    (barrier-only kernels as generators, site calls); greenlets: the thread engine without generators;
    unchanged: the kernel's own code on greenlets, as before the speed work."""
    if mode != "shipped":
        monkeypatch.setenv("GPUSIM_ENGINE", "thread")
    if mode == "greenlets":
        monkeypatch.setattr(gpusim.generators, "generator_names", lambda *args: None)
    if mode == "unchanged":
        monkeypatch.setattr(gpusim.launch, "rewrite", lambda fn, *args: (fn, False))
    now = record()
    assert now.keys() == golden.keys()
    for name, expected in golden.items():
        assert now[name] == expected, name


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    GOLDEN.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
