"""The course's setup: pins kept in step, the mode chosen by utils, and `make lab` serving the start page."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml
from notebook_runs import ROOT


def requirement_pins(text: str) -> dict[str, str]:
    """Package name -> version specifier, from requirements lines (comments and -r includes skipped)."""
    pins = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            name, spec = re.match(r"([A-Za-z0-9_.\-]+)\s*(.*)", line).groups()
            pins[name.lower()] = spec.replace(" ", "")
    return pins


def test_environment_yml_lists_the_requirements_with_the_same_pins():
    pinned = {**requirement_pins((ROOT / "requirements.txt").read_text()),
              **requirement_pins((ROOT / "requirements-dev.txt").read_text())}
    dependencies = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    pip_section = next(d["pip"] for d in dependencies if isinstance(d, dict))
    listed = requirement_pins("\n".join(line for line in pip_section if not line.startswith("-e")))
    assert listed == pinned, "environment.yml and requirements*.txt disagree: keep them in step."
    assert {"-e ./gpusim", "-e ."} <= set(pip_section), "environment.yml installs gpusim's and the course's"


def test_the_course_package_requires_the_gpusim_it_carries():
    """The course's wheel depends on gpusim's package by a range that admits gpusim/'s own version."""
    from packaging.requirements import Requirement

    import gpusim

    lines = (ROOT / "requirements-package.txt").read_text().splitlines()
    requirement = Requirement(next(line for line in lines if line and not line.startswith("#")))
    assert requirement.name == "gpusim" and requirement.specifier.contains(gpusim.__version__)


def python_in_mode(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("COURSE_MODE", "NUMBA_ENABLE_CUDASIM")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**clean, **env},
                          cwd=ROOT, timeout=120)


def test_utils_picks_cpu_mode_without_a_gpu_and_says_so():
    result = python_in_mode("from utils import *; import os; print(MODE, os.environ['NUMBA_ENABLE_CUDASIM'])")
    assert result.returncode == 0, result.stderr
    assert "CPU mode" in result.stdout and result.stdout.strip().endswith("cpu 1")


def test_utils_refuses_gpu_mode_without_a_gpu():
    result = python_in_mode("import utils", COURSE_MODE="gpu")
    assert result.returncode != 0 and "finds no GPU" in result.stderr


def test_utils_refuses_to_switch_an_already_imported_numba():
    result = python_in_mode("import numba; import utils", COURSE_MODE="cpu")
    assert result.returncode != 0 and "Restart the kernel" in result.stderr


def test_dim3_and_cdiv():
    from utils import cdiv, dim3

    assert dim3(4) == (4, 1, 1) and dim3(2, 3).z == 1
    assert [cdiv(n, 32) for n in (1, 32, 33, 64)] == [1, 1, 2, 2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(180)
def test_make_lab_serves_the_start_page():
    port, token = free_port(), "course-test"
    args = f"--no-browser --ServerApp.port={port} --IdentityProvider.token={token} --ServerApp.ip=127.0.0.1"
    lab = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/api/contents/notebooks/00_start_here.ipynb?content=0&token={token}"
    try:
        deadline = time.monotonic() + 150
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    model = json.load(response)
                break
            except OSError:
                assert lab.poll() is None, f"make lab exited:\n{lab.stdout.read().decode()}"
                assert time.monotonic() < deadline, "make lab did not answer within 150 s"
                time.sleep(1)
        assert model["type"] == "notebook" and model["name"] == "00_start_here.ipynb"
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.wait(timeout=30)
