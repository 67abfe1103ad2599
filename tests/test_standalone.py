"""A notebook opened alone: a lesson and an exercise, each copied into an empty folder, run in a fresh
virtualenv outside the checkout where the course arrives only as its built wheels (`make wheels`).

The first cell of each (tools/first_cell.py) says what to do while the course is missing, installs the wheels
named in COURSE, and the notebook then runs. The virtualenv sees the course's third-party packages (NumPy,
Numba, PyTorch, Jupyter...) through a path file onto this virtualenv's site-packages, with the course's own
distributions left out, so the test installs nothing from the network; `pip check` then confirms that what the
wheels require is what is there.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import nbformat
import pytest
from notebook_runs import ROOT

LESSON = ROOT / "notebooks" / "00_gpu_anatomy.ipynb"  # reads bench's recorded results and draws figures
EXERCISE = ROOT / "exercises" / "01_kernels_in_python.ipynb"
PACKAGE_FILES = ("pyproject.toml", "requirements.txt", "requirements-package.txt", "utils.py", "course",
                 "bench", "gpusim")
LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
COURSE_OWN = ("gpu_course", "gpusim", "__editable__", "utils.py")  # what the wheels must bring themselves
PROBE = ('import json, sys, utils, gpusim\n'
         'where = {"prefix": sys.prefix, "utils": utils.__file__, "gpusim": gpusim.__file__}\n'
         'print("PROBE " + json.dumps(where))')

RUNNER = textwrap.dedent('''
    """Run a notebook with nbclient in this Python's own kernel; write it back with its outputs."""
    import sys
    import nbformat
    from nbclient import NotebookClient

    path, allow_errors = sys.argv[1], sys.argv[2] == "allow-errors"
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": sys.argv[3]}})
    try:
        client.execute()
    finally:
        nbformat.write(notebook, path)
''')


def run(command, work, **kwargs):
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, cwd=work,
                            **kwargs)
    assert result.returncode == 0, f"{command}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def alone(work: Path, **extra) -> dict:
    """The environment of a learner's machine: nothing of the checkout, the package index out of reach."""
    return {"PATH": os.environ["PATH"], "HOME": str(work / "home"), "COURSE_MODE": "cpu", "PIP_NO_INDEX": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1", **extra}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """The course's wheel and gpusim's in work/dist, built from a copy of what they package."""
    work = tmp_path_factory.mktemp("standalone")
    (work / "home").mkdir()
    for name in PACKAGE_FILES:
        source, copy = ROOT / name, work / "src" / name
        if source.is_dir():
            shutil.copytree(source, copy, ignore=LEFT_OUT)
        else:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
    env = {**os.environ, "PYTHONPATH": "", "HOME": str(work / "home")}
    for project in (work / "src" / "gpusim", work / "src"):
        run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", work / "dist", project],
            work, env=env, timeout=600)
    return work


@pytest.fixture(scope="module")
def venv(work):
    """A fresh virtualenv whose only view of this one is its third-party packages."""
    run([sys.executable, "-m", "venv", "--without-pip", work / "venv"], work, timeout=300)
    python = work / "venv" / "bin" / "python"
    ours = Path(sysconfig.get_paths()["purelib"])
    theirs = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work,
                      timeout=120).stdout.strip())
    deps = work / "dependencies"
    deps.mkdir()
    for entry in ours.iterdir():
        if entry.name.startswith(COURSE_OWN):
            continue
        if entry.suffix == ".pth":  # processed only in a site folder: numba-cuda's redirector is one
            shutil.copy2(entry, theirs / entry.name)
        else:
            (deps / entry.name).symlink_to(entry)
    (theirs / "00-course-dependencies.pth").write_text(f"{deps}\n")  # before the copied .pth files
    return python


def notebook_alone(work: Path, source: Path, course: str = "", probe: bool = False) -> Path:
    """A copy of a notebook in an empty folder, with COURSE set as a learner would set it."""
    folder = work / f"alone-{source.stem}"
    folder.mkdir()
    notebook = nbformat.read(source, as_version=4)
    first = next(cell for cell in notebook.cells if cell.cell_type == "code")
    assert 'COURSE = ""' in first.source
    first.source = first.source.replace('COURSE = ""', f"COURSE = {course!r}", 1)
    if probe:
        notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
    nbformat.write(notebook, folder / source.name)
    return folder / source.name


def execute(python, work, path, allow_errors=False):
    (work / "runner.py").write_text(RUNNER)
    result = subprocess.run([str(python), str(work / "runner.py"), str(path),
                             "allow-errors" if allow_errors else "stop", str(path.parent)],
                            capture_output=True, text=True, cwd=path.parent, env=alone(work), timeout=900)
    assert result.returncode == 0, f"{path.name} failed alone:\n{result.stderr[-4000:]}"
    return nbformat.read(path, as_version=4)


def errors(notebook) -> list[tuple[int, dict]]:
    return [(index, output) for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
            for output in cell.outputs if output.output_type == "error"]


@pytest.mark.timeout(600)
def test_without_the_course_the_first_cell_says_how_to_get_it(tmp_path):
    """In an empty virtualenv, COURSE left empty: a clear error with the command, and nothing installed."""
    run([sys.executable, "-m", "venv", "--without-pip", tmp_path / "venv"], tmp_path, timeout=300)
    python = tmp_path / "venv" / "bin" / "python"
    first = next(c for c in nbformat.read(EXERCISE, as_version=4).cells if c.cell_type == "code").source
    before = sorted(p.name for p in (tmp_path / "venv").rglob("*"))
    result = subprocess.run([str(python), "-c", first], capture_output=True, text=True, cwd=tmp_path,
                            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)}, timeout=300)
    assert result.returncode != 0
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("ModuleNotFoundError: This notebook needs the course's package"), message
    assert "set COURSE in this cell" in message and f"{python} -m pip install --find-links" in message
    assert sorted(p.name for p in (tmp_path / "venv").rglob("*")) == before, "nothing may be installed"


@pytest.mark.timeout(1800)
def test_a_lesson_alone_installs_the_course_from_its_wheel_and_runs(work, venv):
    wheel, = (work / "dist").glob("gpu_course-*.whl")
    lesson = execute(venv, work, notebook_alone(work, LESSON, course=str(wheel), probe=True))
    assert errors(lesson) == []
    outputs = [o for cell in lesson.cells if cell.cell_type == "code" for o in cell.outputs]
    printed = "".join(o.get("text", "") for o in outputs)
    assert "Installing the course:" in printed and "utils: CPU mode" in printed
    probe = json.loads(printed.split("PROBE ", 1)[1].splitlines()[0])
    assert Path(probe["prefix"]) == work / "venv"
    for module in ("utils", "gpusim"):
        assert Path(probe[module]).is_relative_to(work / "venv"), probe
    assert any("image/png" in o.get("data", {}) for o in outputs), "the lesson drew no figure"
    run([venv, "-m", "pip", "check"], work, env=alone(work), timeout=300)


@pytest.mark.timeout(1800)
def test_an_exercise_alone_runs_once_the_course_is_installed(work, venv):
    """Its cells run; only the checks of the tasks left to the learner fail, with the checks' own errors."""
    wheels = str(work / "dist")  # COURSE may also name the folder of the wheels
    exercise = execute(venv, work, notebook_alone(work, EXERCISE, course=wheels), allow_errors=True)
    failed = errors(exercise)
    assert failed, "an unsolved exercise must fail its checks"
    for index, output in failed:
        cell = exercise.cells[index]
        nbgrader = cell.metadata.get("nbgrader", {})
        assert nbgrader.get("grade") or nbgrader.get("solution"), f"cell {index + 1}: {output.ename}"
        assert output.ename not in ("ModuleNotFoundError", "ImportError", "FileNotFoundError"), output.evalue
