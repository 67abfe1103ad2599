"""gpusim on its own: a copy of gpusim/, and nothing else of the course, runs checked kernels in a virtualenv
with only NumPy, greenlet and numba-cuda installed (`make gpusim-venv` builds it; `make test` does too)."""

import json
import os
import shutil
import subprocess
import textwrap

import pytest
from notebook_runs import ROOT

PYTHON = ROOT / ".venv-gpusim" / "bin" / "python"

PROGRAM = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from numba import cuda
    import gpusim

    @cuda.jit
    def add(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    @cuda.jit
    def racy_sum(a, out):
        total = cuda.shared.array(1, np.float32)
        if cuda.threadIdx.x == 0:
            total[0] = 0
        cuda.syncthreads()
        total[0] += a[cuda.threadIdx.x]  # every thread of the block, at once: a race
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            out[0] = total[0]

    a = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    kernel = gpusim.jit(add)
    kernel[2, 32](a, a, out)
    seen = {"right": bool((out == 2 * a).all()), "counters": kernel.report.as_dict()}
    try:
        gpusim.jit(racy_sum)[1, 32](a, out)
    except gpusim.RaceError as error:
        seen["race"] = str(error)
    seen["file"] = gpusim.__file__
    seen["loaded"] = sorted({name.split(".")[0] for name in sys.modules})
    print(json.dumps(seen))
""")


def _venv_or_skip():
    if PYTHON.exists():
        return
    reason = f"{PYTHON.parent.parent.name} is missing: `make gpusim-venv` builds it"
    if os.environ.get("COURSE_REQUIRE_GPUSIM_VENV") == "1":
        pytest.fail(f"COURSE_REQUIRE_GPUSIM_VENV=1 but {reason}")
    pytest.skip(reason)


def test_the_minimal_virtualenv_has_only_numpy_greenlet_and_numba_cuda():
    _venv_or_skip()
    listed = subprocess.run([PYTHON, "-m", "pip", "list", "--format", "json"], capture_output=True, text=True,
                            timeout=120, check=True)
    installed = {package["name"].lower() for package in json.loads(listed.stdout)}
    assert {"numpy", "greenlet", "numba-cuda"} <= installed
    assert installed.isdisjoint({"torch", "matplotlib", "ipywidgets", "gpu-course", "pytest", "triton"})


@pytest.mark.parametrize("numba_simulator", [False, True], ids=["numba-cuda", "numba-simulator"])
def test_a_copy_of_gpusim_alone_runs_checked_kernels_there(tmp_path, numba_simulator):
    _venv_or_skip()
    shutil.copytree(ROOT / "gpusim", tmp_path / "src" / "gpusim",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "examples"))
    (tmp_path / "program.py").write_text(PROGRAM)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    if numba_simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    # -I: no PYTHONPATH, no user site, not the current folder: only the virtualenv and the copy of gpusim/
    run = subprocess.run([PYTHON, "-I", tmp_path / "program.py", tmp_path / "src"], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["file"] == str(tmp_path / "src" / "gpusim" / "__init__.py")
    assert seen["right"]
    counters = seen["counters"]
    assert (counters["blocks"], counters["threads"]) == (2, 64)
    assert (counters["global_loads"], counters["global_stores"]) == (128, 64)
    assert counters["global_sectors"] == 2 * 3 * 4  # 2 warps, 3 arrays, 128 contiguous bytes = 4 sectors each
    assert "both wrote total[0]" in seen["race"] and "program.py:" in seen["race"]
    loaded = set(seen["loaded"])
    assert {"gpusim", "numpy", "greenlet"} <= loaded
    assert loaded.isdisjoint({"course", "utils", "bench", "torch", "matplotlib", "ipywidgets"})
