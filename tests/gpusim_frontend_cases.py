"""The suite's gpusim kernels, launched under each Numba CUDA front end: results, counters and errors as JSON.

Run by tests/test_gpusim_mlir.py in the .venv-mlir interpreter, which has numba-cuda and numba_cuda_mlir:

    python tests/gpusim_frontend_cases.py TWIN_DIR

TWIN_DIR holds the numba_cuda_mlir twins of gpusim_kernels.py and gpusim_named_kernels.py, under the same
file names, so that error messages (which name the file and quote the line) can be compared as they are.
"""

import importlib.util
import json
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

TESTS = Path(__file__).resolve().parent
MODULES = {"K": "gpusim_kernels.py", "N": "gpusim_named_kernels.py"}
NOT_INSTALLED = 3  # the exit status when this interpreter has no numba_cuda_mlir

_RNG = np.random.default_rng(11)
_X = _RNG.random(200, dtype=np.float32)
_A = _RNG.random((32, 48), dtype=np.float32)
_B = _RNG.random((48, 32), dtype=np.float32)
_S = _RNG.random((32, 32), dtype=np.float32)
_DATA = _RNG.integers(0, 100, 500).astype(np.int32)


def _f32(shape):
    return np.zeros(shape, np.float32)


def _zeros(shape, dtype):
    return np.zeros(shape, dtype)


def _ints(n):
    return np.arange(n, dtype=np.int32)


MATMUL = ((2, 2), (16, 16))


class Case(NamedTuple):
    module: str  # a key of MODULES
    kernel: object  # an attribute name, or (factory name, argument)
    config: tuple  # the launch configuration
    make_args: object  # makes the arguments afresh for every launch
    error: str | None = None  # the gpusim error class expected
    options: dict = {}  # gpusim.jit options


CASES = {
    "vector_add": Case("K", "vector_add", (4, 64), lambda: [_X, _X, _f32(200)]),
    "vector_add_fast": Case(
        "K", "vector_add", (4, 64), lambda: [_X, _X, _f32(200)], options={"check": False}
    ),
    "scale_add": Case("K", "scale_add", (7, 32), lambda: [_X, 2.0, 1, _f32(200)]),
    "index_report_3d": Case(
        "K", "index_report", ((2, 3, 2), (4, 2, 3)), lambda: [_zeros((6, 6, 8, 5), np.int64)]
    ),
    "dynamic_shared_views": Case("K", "dynamic_shared_views", (1, 32, 0, 256), lambda: [_X[:32], _f32(32)]),
    "block_reverse": Case("K", "block_reverse", (2, 64), lambda: [_ints(128), _zeros(128, np.int32)]),
    "block_sum": Case("K", "block_sum", (2, 128), lambda: [_X, _f32(2)]),
    "matmul_naive": Case("K", "matmul_naive", MATMUL, lambda: [_S, _S, _f32((32, 32))]),
    "matmul_tiled_factory": Case("K", ("make_matmul_tiled", 16), MATMUL, lambda: [_A, _B, _f32((32, 32))]),
    "matmul_tiled_random": Case(
        "K",
        "matmul_tiled",
        MATMUL,
        lambda: [_S, _S, _f32((32, 32))],
        options={"schedule": "random", "seed": 1},
    ),
    "barrier_in_device_function": Case(
        "K", "rotate_via_device_barrier", (1, 64), lambda: [_X[:64], _f32(64)]
    ),
    "barrier_predicates": Case(
        "K",
        "barrier_predicates",
        (1, 32),
        lambda: [np.array([1] * 10 + [0] * 22, np.int32), _zeros(3, np.int32)],
    ),
    "local_and_const": Case(
        "K", "local_and_const", (1, 8), lambda: [np.arange(1, 5, dtype=np.float32), _f32(8)]
    ),
    "atomics": Case(
        "K",
        "atomics",
        (1, 10),
        lambda: [np.arange(1, 11, dtype=np.int64), np.array([0, 0, -100, 100, 0, 0, 0, 0], np.int64)],
    ),
    "histogram_atomic": Case("K", "histogram_shared_atomic", (4, 128), lambda: [_DATA, _zeros(16, np.int32)]),
    "math_and_types": Case("K", "math_and_types", (4, 64), lambda: [_X * 4, _f32(200)]),
    "scan_double_buffer": Case("K", "scan_double_buffer", (1, 64), lambda: [_X[:64], _f32(64)]),
    "warp_reduce_shfl": Case("K", "warp_reduce_shfl", (1, 64), lambda: [_X[:64], _f32(2)]),
    "warp_scan_shfl_up": Case("K", "warp_scan_shfl_up", (2, 32), lambda: [_X[:64], _f32(64)]),
    "warp_votes_and_shuffles": Case(
        "K",
        "warp_misc",
        (1, 48),
        lambda: [np.array([1, -1] * 16 + [1] * 16, np.int64), _zeros((48, 7), np.int64)],
    ),
    "syncwarp_reduction": Case("K", "warp_reduce_shared_syncwarp", (1, 32), lambda: [_X[:32], _f32(1)]),
    "plain_function": Case("K", "plain_copy", (1, 32), lambda: [_X[:32], _f32(32)]),
    "copy_strided": Case(
        "K", "copy_strided", (4, 64), lambda: [np.ones((256, 32), np.float32), _f32((256, 32))]
    ),
    "transpose_bank_conflicts": Case(
        "K", ("make_transpose_tile", 0), (1, (32, 32)), lambda: [_S, _f32((32, 32))]
    ),
    "racy_matmul_fast": Case(
        "K", "matmul_no_sync_after_load", MATMUL, lambda: [_S, _S, _f32((32, 32))], options={"check": False}
    ),
    "race_missing_barrier": Case(
        "K", "matmul_no_sync_after_load", MATMUL, lambda: [_S, _S, _f32((32, 32))], "RaceError"
    ),
    "race_random_schedule": Case(
        "K",
        "matmul_no_sync_before_overwrite",
        MATMUL,
        lambda: [_S, _S, _f32((32, 32))],
        "RaceError",
        {"schedule": "random", "seed": 2},
    ),
    "race_histogram": Case(
        "K",
        "histogram_shared_racy",
        (1, 64),
        lambda: [_ints(64) % 4, _zeros(16, np.int32)],
        "WriteConflictError",
    ),
    "race_scan": Case("K", "scan_single_buffer", (1, 64), lambda: [_X[:64], _f32(64)], "RaceError"),
    "race_between_blocks": Case(
        "K", "every_block_writes_first", (2, 1), lambda: [_zeros(1, np.float64)], "WriteConflictError"
    ),
    "race_missing_syncwarp": Case(
        "K", "warp_reduce_shared_no_syncwarp", (1, 32), lambda: [_X[:32], _f32(1)], "RaceError"
    ),
    "barrier_in_branch": Case(
        "K", "barrier_in_branch", (1, 32), lambda: [_zeros(32, np.float64)], "BarrierError"
    ),
    "barrier_after_return": Case("K", "early_return", (1, 64), lambda: [_f32(64), 40], "BarrierError"),
    "different_barriers": Case(
        "K", "different_barriers", (1, 8), lambda: [_zeros(8, np.float64)], "BarrierError"
    ),
    "shuffle_after_return": Case(
        "K", "shfl_after_early_return", (1, 32), lambda: [_X[:32], _f32(32), 20], "BarrierError"
    ),
    "negative_index": Case(
        "K", "stencil_negative_index", (1, 64), lambda: [_X[:64], _f32(64)], "OutOfBoundsError"
    ),
    "past_the_end": Case(
        "K", "vector_add", (1, 64), lambda: [_X[:64], _X[:50], _f32(64)], "OutOfBoundsError"
    ),
    "uninitialized_shared": Case(
        "K", "uninitialized_shared", (1, 64), lambda: [_f32(64)], "UninitializedReadError"
    ),
    "uninitialized_dynamic": Case(
        "K", "dynamic_uninitialized", (1, 8, 0, 32), lambda: [_zeros(8, np.float64)], "UninitializedReadError"
    ),
    "exception_in_kernel": Case(
        "K", "divide_by_zero", (1, 8), lambda: [_zeros(8, np.int64)], "KernelException"
    ),
    "too_much_shared": Case("K", "big_shared", (1, 1), lambda: [_f32(1)], "ResourceError"),
    "by_name_reverse": Case("N", "reverse_by_name", (2, 64), lambda: [_ints(128), _zeros(128, np.int32)]),
    "by_name_local_and_atomic": Case("N", "local_sum_and_atomic", (2, 32), lambda: [_X[:64], _f32(1)]),
    "by_name_shuffle": Case("N", "warp_sum_by_name", (1, 64), lambda: [_X[:64], _f32(2)]),
    "by_name_shared_atomic": Case("N", "block_total_by_name", (2, 32), lambda: [_X[:64], _f32(2)]),
    "by_name_race": Case(
        "N", "reverse_by_name_no_barrier", (1, 64), lambda: [_ints(64), _zeros(64, np.int32)], "RaceError"
    ),
    "by_name_past_the_end": Case(
        "N", "shifted_read_by_name", (1, 32), lambda: [_X[:32], _f32(32)], "OutOfBoundsError"
    ),
}


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _kernel(module, spec):
    if isinstance(spec, tuple):
        factory, argument = spec
        return getattr(module, factory)(argument)
    return getattr(module, spec)


def run_case(modules, case):
    """Launch one case under gpusim: the kernel's type, the arguments afterwards, the report and the error."""
    import gpusim

    kernel = _kernel(modules[case.module], case.kernel)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in case.make_args()]
    simulated = gpusim.jit(kernel, **case.options)
    error = None
    try:
        simulated[case.config](*args)
    except gpusim.KernelError as caught:
        error = [type(caught).__name__, str(caught), type(caught.__cause__).__name__]
    report = simulated.report
    return {
        "kernel_type": f"{type(kernel).__module__}.{type(kernel).__qualname__}",
        "args": [a.tolist() for a in args if isinstance(a, np.ndarray)],
        "report": None if report is None else report.as_dict(),
        "error": error,
    }


def main(twin_dir):
    if importlib.util.find_spec("numba_cuda_mlir") is None:
        print(
            "numba_cuda_mlir is not installed here (it has wheels for Linux and Windows only)",
            file=sys.stderr,
        )
        sys.exit(NOT_INSTALLED)
    results = {}
    for front_end, folder in (("numba-cuda", TESTS), ("numba-cuda-mlir", Path(twin_dir))):
        modules = {key: _load(folder / file, f"{front_end}_{key}") for key, file in MODULES.items()}
        results[front_end] = {name: run_case(modules, case) for name, case in CASES.items()}
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
