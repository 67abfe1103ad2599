"""Kernels written with `from numba_cuda_mlir import cuda` run under gpusim as their numba-cuda twins do.

numba_cuda_mlir (NVIDIA's successor to numba-cuda) lives in its own virtualenv, .venv-mlir, which `make test`
builds. The suite's gpusim kernels (tests/gpusim_kernels.py, tests/gpusim_named_kernels.py) get twins that
differ only in their imports (and in two lines that use numba_cuda_mlir's local_array and shared_array); both
sets run under gpusim in that interpreter (tests/gpusim_frontend_cases.py) and must give the same results, the
same Report counters and the same errors, message for message.
"""

import json
import os
import re
import subprocess

import pytest
from gpusim_frontend_cases import CASES, MODULES, NOT_INSTALLED, TESTS

from gpusim import frontends
from gpusim.fakecuda import FakeCuda

ROOT = TESTS.parent
MLIR_PYTHON = ROOT / ".venv-mlir" / "bin" / "python"

# The numba_cuda_mlir twin of each kernel module: (numba-cuda text, numba_cuda_mlir text), each replaced once.
# Line numbers stay the same, so error messages that name a line can be compared as they are.
TWIN_SWAPS = {
    "gpusim_kernels.py": [
        ("\nimport numba\n", "\nimport numba_cuda_mlir.types as numba\n"),
        (
            "\nfrom numba import cuda, float32, int32\n",
            "\nfrom numba_cuda_mlir import cuda; from numba_cuda_mlir.cuda import float32, int32\n",
        ),
    ],
    "gpusim_named_kernels.py": [
        ("\nfrom numba import cuda\n", "\nfrom numba_cuda_mlir import cuda\n"),
        (
            "\nfrom numba.cuda import atomic, blockDim, blockIdx, grid, local, shared,",
            "\nfrom numba_cuda_mlir.cuda import atomic, blockDim, blockIdx, grid, local_array, shared, "
            "shared_array,",
        ),
        (
            "\nfrom numba.types import float32, int32\n",
            "\nfrom numba_cuda_mlir.types import float32, int32\n",
        ),
        # numba_cuda_mlir's module-level aliases of local.array and shared.array:
        ("acc = local.array(4, float32)", "acc = local_array(4, float32)"),
        ("total = shared.array(1, float32)", "total = shared_array(1, float32)"),
    ],
}
NUMBA_CUDA_IMPORT = re.compile(r"^\s*(import numba\b(?!_)|from numba[. ])", re.MULTILINE)


def mlir_twin(source, swaps):
    """The numba_cuda_mlir version of a kernel module's source."""
    for old, new in swaps:
        assert source.count(old) == 1, f"expected one {old!r} in the kernel module"
        source = source.replace(old, new)
    assert not NUMBA_CUDA_IMPORT.search(source), "the twin still imports numba-cuda"
    return source


def skip_or_fail(reason):
    """Skip on a learner's machine; fail on CI (.ci/run sets COURSE_REQUIRE_SANDBOX=1), which must test it."""
    if os.environ.get("COURSE_REQUIRE_SANDBOX") or os.environ.get("CI"):
        pytest.fail(f"on CI numba_cuda_mlir must be tested, but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every case under both front ends, run once in .venv-mlir's interpreter."""
    if not MLIR_PYTHON.exists():
        skip_or_fail(".venv-mlir is missing: `make mlir-venv` builds it (`make test` does)")
    twins = tmp_path_factory.mktemp("mlir_twins")
    for file in MODULES.values():
        (twins / file).write_text(mlir_twin((TESTS / file).read_text(), TWIN_SWAPS[file]))
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_ENABLE_CUDASIM="0")
    done = subprocess.run(
        [str(MLIR_PYTHON), str(TESTS / "gpusim_frontend_cases.py"), str(twins)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    if done.returncode == NOT_INSTALLED:
        skip_or_fail(done.stderr.strip())
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", list(CASES))
def test_front_ends_agree(results, name):
    expected_error = CASES[name].error
    numba_cuda, mlir = results["numba-cuda"][name], results["numba-cuda-mlir"][name]
    assert numba_cuda["kernel_type"].startswith(("numba.cuda.", "builtins.function"))
    assert mlir["kernel_type"].startswith(("numba_cuda_mlir.", "builtins.function"))
    for result in (numba_cuda, mlir):
        assert (result["error"] or [None])[0] == expected_error, result["error"]
    if expected_error is None:
        assert numba_cuda["report"] is not None
    assert mlir["args"] == numba_cuda["args"]
    assert mlir["report"] == numba_cuda["report"]
    assert mlir["error"] == numba_cuda["error"]


def test_front_end_modules_are_known_by_name():
    assert frontends.cuda_part("numba.cuda") == frontends.cuda_part("numba_cuda_mlir.cuda") == ""
    assert frontends.cuda_part("numba.cuda.simulator.kernelapi") == ""
    assert frontends.cuda_part("numba_cuda_mlir.cuda.shared") == "shared"
    assert frontends.cuda_part("numba_cuda_mlir") is None and frontends.cuda_part("math") is None
    assert frontends.is_namespace("numba_cuda_mlir.types") and not frontends.is_namespace("numpy")


def test_laneid_imported_by_name_is_refused_with_a_hint():
    with pytest.raises(TypeError, match="Read it as `cuda.laneid`"):
        FakeCuda(lambda value: value).member("laneid")
