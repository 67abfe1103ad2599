"""gpusim as its own distribution (gpusim/pyproject.toml): the wheel and sdist build; the wheel, installed
into an empty virtualenv with nothing but its dependencies and pytest, runs the Python blocks of the README it
carries as its description, `pytest --pyargs gpusim.examples`, and the `pytest --gpusim` plugin it registers.

The virtualenv takes the course's pins as constraints, so it gets the versions the course is tested with.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest
from notebook_runs import ROOT

import gpusim

SOURCE = ROOT / "gpusim"
LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")

README_RUNNER = textwrap.dedent('''
    """Run the ```python blocks of the installed gpusim's README (its description), in order, in one
    namespace; call the test functions each defines. A block after a comment "not run ..." is skipped."""
    import importlib.metadata, json, re
    import gpusim

    readme = importlib.metadata.metadata("gpusim").get_payload()
    blocks = re.findall(r"(<!-- not run[^>]*-->\\s*)?```python\\n(.*?)```", readme, re.S)
    namespace, ran, tests = {"__name__": "readme"}, 0, []
    for skipped, code in blocks:
        if skipped:
            continue
        before = set(namespace)
        exec(compile(code, f"README block {ran + 1}", "exec"), namespace)
        for name in sorted(set(namespace) - before):
            if name.startswith("test_") and callable(namespace[name]):
                namespace[name]()
                tests.append(name)
        ran += 1
    print(json.dumps({"blocks": len(blocks), "ran": ran, "tests": tests, "file": gpusim.__file__,
                      "version": gpusim.__version__, "report": type(namespace["k"].report).__name__}))
''')

PLUGIN_SUITE = textwrap.dedent('''
    import numpy as np
    from numba import cuda

    @cuda.jit
    def differences(a, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] - a[i - 1]  # a[-1] at i = 0: Numba wraps it, gpusim reports it

    def test_differences():
        a = np.arange(64, dtype=np.float32)
        out = np.zeros_like(a)
        differences[2, 32](a, out)
        assert (out[1:] == 1).all()
''')


def pinned(name: str) -> str:
    """name==version as requirements-dev.txt pins it."""
    return next(line.strip() for line in (ROOT / "requirements-dev.txt").read_text().splitlines()
                if line.startswith(f"{name}=="))


def alone(work: Path, **extra) -> dict:
    """An environment with nothing of the checkout: no PYTHONPATH, no simulator switch unless asked."""
    return {"PATH": os.environ["PATH"], "HOME": str(work), **extra}


def run(command, work: Path, **kwargs) -> subprocess.CompletedProcess:
    """Run a command in `work` (its home folder too, so nothing is written into the checkout)."""
    kwargs.setdefault("env", alone(work))
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{command}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """gpusim's wheel and sdist, built from a copy of gpusim/ (so the checkout gets no build folders); the
    commands that use the wheel run in work/, where no copy of gpusim's source is."""
    work = tmp_path_factory.mktemp("gpusim-package")
    source = work / "src" / "gpusim"
    shutil.copytree(SOURCE, source, ignore=LEFT_OUT)
    run([sys.executable, "-m", "build", "--no-isolation", source, "--outdir", work / "dist"], work,
        timeout=300, env={**os.environ, "PYTHONPATH": "", "HOME": str(work)})
    wheel, = (work / "dist").glob(f"gpusim-{gpusim.__version__}-py3-none-any.whl")
    sdist, = (work / "dist").glob(f"gpusim-{gpusim.__version__}.tar.gz")
    return work, wheel, sdist


@pytest.fixture(scope="module")
def venv(built):
    """An empty virtualenv outside the checkout, with the wheel, its dependencies and pytest installed (by
    this Python's pip, pointed at it: the virtualenv itself gets no pip)."""
    work, wheel, _ = built
    run([sys.executable, "-m", "venv", "--without-pip", work / "venv"], work, timeout=300)
    python = work / "venv" / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", python]
    run(pip + ["install", "-q", "-c", ROOT / "requirements.txt", wheel, pinned("pytest")], work, timeout=900)
    return python


def source_files() -> set[str]:
    return {str(p.relative_to(SOURCE)) for p in SOURCE.rglob("*")
            if p.is_file() and not LEFT_OUT(str(p.parent), [p.name]) and "__pycache__" not in p.parts}


def test_the_sdist_holds_every_source_file_and_the_wheel_every_module(built):
    _, wheel, sdist = built
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert source_files() <= in_sdist
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
        metadata = archive.read(f"gpusim-{gpusim.__version__}.dist-info/METADATA").decode()
        entry_points = archive.read(f"gpusim-{gpusim.__version__}.dist-info/entry_points.txt").decode()
    modules = {f"gpusim/{name}" for name in source_files() if name.endswith(".py") or name.endswith(".md")}
    assert modules <= in_wheel
    assert f"Version: {gpusim.__version__}" in metadata
    assert (SOURCE / "README.md").read_text() in metadata  # the README is the long description
    for requirement in ("numpy<2.5,>=2.0", "greenlet", "numba-cuda", 'extra == "viz"', 'extra == "compile"',
                        'extra == "mlir"'):
        assert requirement in metadata
    assert "gpusim.pytest_plugin = gpusim.pytest_plugin" in entry_points


@pytest.mark.timeout(1200)
def test_the_installed_wheel_runs_its_readme_outside_the_checkout(built, venv):
    work = built[0]
    (work / "readme.py").write_text(README_RUNNER)
    result = json.loads(run([venv, work / "readme.py"], work, cwd=work, timeout=300).stdout.splitlines()[-1])
    python_blocks = len(re.findall(r"^```python$", (SOURCE / "README.md").read_text(), re.M))
    assert result["blocks"] == python_blocks and result["ran"] == python_blocks - 1, result
    assert result["tests"] == ["test_a_forgotten_barrier_is_a_race"] and result["report"] == "Report"
    assert Path(result["file"]).is_relative_to(work / "venv") and result["version"] == gpusim.__version__


@pytest.mark.timeout(1200)
def test_the_installed_wheel_runs_its_examples_with_pytest_pyargs(built, venv):
    result = run([venv, "-m", "pytest", "--pyargs", "gpusim.examples", "-q", "-p", "no:cacheprovider"],
                 built[0], cwd=built[0], timeout=300)
    examples = (SOURCE / "examples" / "test_example_kernels.py").read_text()
    summary = result.stdout.strip().splitlines()[-1]
    passed = re.match(r"(\d+) passed", summary)
    assert passed and "failed" not in summary, result.stdout[-2000:]
    assert int(passed.group(1)) >= len(re.findall(r"^def test_", examples, re.M))


@pytest.mark.timeout(1200)
def test_the_installed_wheel_registers_the_pytest_plugin(built, venv):
    work = built[0]
    (work / "suite").mkdir(exist_ok=True)
    (work / "suite" / "test_scale.py").write_text(PLUGIN_SUITE)
    pytest_in_venv = [venv, "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite"]
    plain = subprocess.run(pytest_in_venv, cwd=work, capture_output=True, text=True, timeout=300,
                           env=alone(work, NUMBA_ENABLE_CUDASIM="1"))
    checked = subprocess.run(pytest_in_venv + ["--gpusim"], cwd=work, capture_output=True, text=True,
                             timeout=300, env=alone(work))
    assert plain.returncode == 0, plain.stdout[-2000:]  # Numba's simulator wraps a[-1], as a GPU does
    assert checked.returncode == 1 and "OutOfBoundsError" in checked.stdout, checked.stdout[-2000:]
    assert "differences" in checked.stdout.split("gpusim: kernel launches and counters")[-1]
