"""An instructor can drop solutions/ into a standard nbgrader course: generate, autograde, and read scores."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from notebook_runs import ROOT

ASSIGNMENT = "ps01"


def nbgrader(course: Path, *args: str) -> None:
    command = [sys.executable, "-m", "nbgrader", *args, "--CourseDirectory.root=" + str(course)]
    result = subprocess.run(command, cwd=course, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "COURSE_MODE": "cpu",  # nbgrader runs `alembic` from PATH
                                 "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"


def test_nbgrader_generates_and_autogrades_a_course_notebook(tmp_path):
    solution = sorted(ROOT.glob("solutions/01_*.ipynb"))[0]
    (tmp_path / "source" / ASSIGNMENT).mkdir(parents=True)
    shutil.copy(solution, tmp_path / "source" / ASSIGNMENT / solution.name)
    nbgrader(tmp_path, "generate_assignment", ASSIGNMENT, "--force")

    released = tmp_path / "release" / ASSIGNMENT / solution.name
    for learner, notebook in {"correct": solution, "unsolved": released}.items():
        folder = tmp_path / "submitted" / learner / ASSIGNMENT
        folder.mkdir(parents=True)
        shutil.copy(notebook, folder / solution.name)
    nbgrader(tmp_path, "autograde", ASSIGNMENT, "--create", "--force")

    max_points = sum(cell.metadata.get("nbgrader", {}).get("points", 0)
                     for cell in nbformat.read(solution, as_version=4).cells)
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        assert gradebook.find_submission(ASSIGNMENT, "correct").score == max_points > 0
        assert gradebook.find_submission(ASSIGNMENT, "unsolved").score == 0
