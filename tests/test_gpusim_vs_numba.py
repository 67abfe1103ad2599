"""The same correct kernels give the same results under gpusim and under Numba's own simulator."""

import json
import os
import subprocess
import sys
from pathlib import Path

import gpusim_kernels as K
import numpy as np

import gpusim

TESTS = Path(__file__).resolve().parent


def cases():
    """(name, kernel, launch config, argument arrays) for kernels that Numba's simulator supports."""
    rng = np.random.default_rng(7)
    A, B = rng.random((32, 48), dtype=np.float32), rng.random((48, 32), dtype=np.float32)
    data = rng.integers(0, 50, 300).astype(np.int32)
    x = rng.random(200, dtype=np.float32)
    return [
        ("vector_add", K.vector_add, (4, 64), [x, x, np.zeros_like(x)]),
        (
            "block_reverse",
            K.block_reverse,
            (2, 64),
            [np.arange(128, dtype=np.int32), np.zeros(128, np.int32)],
        ),
        ("block_sum", K.block_sum, (2, 128), [x, np.zeros(2, np.float32)]),
        ("matmul_tiled", K.matmul_tiled, ((2, 2), (16, 16)), [A, B, np.zeros((32, 32), np.float32)]),
        ("histogram", K.histogram_shared_atomic, (3, 128), [data, np.zeros(16, np.int32)]),
        ("scan", K.scan_double_buffer, (1, 64), [x[:64].copy(), np.zeros(64, np.float32)]),
        ("math", K.math_and_types, (4, 64), [x, np.zeros_like(x)]),
        (
            "transpose",
            K.make_transpose_tile(1),
            (1, (32, 32)),
            [A[:, :32].copy(), np.zeros((32, 32), np.float32)],
        ),
    ]


NUMBA_SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_gpusim_vs_numba import cases
results = {{}}
for name, kernel, config, args in cases():
    kernel[config](*args)
    results[name] = [a.tolist() for a in args]
print(json.dumps(results))
"""


def test_gpusim_agrees_with_numba_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    done = subprocess.run(
        [sys.executable, "-c", NUMBA_SCRIPT.format(tests=str(TESTS))],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    expected = json.loads(done.stdout)
    for name, kernel, config, args in cases():
        gpusim.jit(kernel)[config](*args)
        for ours, theirs in zip(args, expected[name], strict=True):
            np.testing.assert_allclose(ours, np.array(theirs, dtype=ours.dtype), rtol=1e-5, err_msg=name)
