"""Classroom mode (``python -m gpusim.grade``): the fixture class of fake learners gets exactly the expected
grades, cheating and hanging cost only the tasks concerned, hidden tests stay hidden, and the run is quick."""

import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from grading import learners
from grading.fake_class import write_class
from nbgrader.api import Gradebook
from notebook_runs import ROOT
from test_nbgrader_course import ASSIGNMENT, nbgrader

from gpusim.grade.assignments import load_assignment
from gpusim.grade.discovery import find_submissions
from gpusim.grade.judging import FAILED, PASSED, judge_call
from gpusim.grade.restore import Unreadable, match_assignment, prepare
from gpusim.grade.wire import WireError, decode_array, encode_array

CLASS_BOUND_S = 100  # the whole fixture class, reference timing included, on 2 cores
FAST_LEARNERS = ("correct", "partial", "broken_json", "messy")


def _grade(submissions: Path, out: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "gpusim.grade", str(submissions), "--out", str(out), "--jobs", "2"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _rows(path: Path) -> list[dict]:
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def _expected_grades(out: Path) -> None:
    got: dict[tuple[str, str], list[dict]] = {}
    for row in _rows(out / "grades.csv"):
        got.setdefault((row["learner"], row["assignment"]), []).append(row)
    expected = {(learner, assignment): grades for learner, by_assignment in learners.EXPECTED.items()
                for assignment, grades in by_assignment.items()}
    assert sorted(got) == sorted(expected)
    for key, (points, statuses) in expected.items():
        rows = got[key]
        assert tuple(row["status"] for row in rows) == statuses, f"{key}: {[r['reason'] for r in rows]}"
        assert sum(float(row["points"]) for row in rows) == points, key


def _cheater_scores_nothing_on_the_patched_tasks(out: Path) -> None:
    cheater = {(row["assignment"], row["task"]): row for row in _rows(out / "grades.csv")
               if row["learner"] == "cheater"}
    patched = [key for key in cheater if key != (learners.A01, "check_vector_add")]
    assert all(cheater[key]["points"] == "0" for key in patched)
    assert "did not come from the kernel" in cheater[(learners.A02, "check_block_sum")]["reason"]
    feedback = (out / "feedback" / "cheater" / f"{learners.A01}.md").read_text()
    assert "`setup` had been edited; the grader restored it" in feedback
    if os.geteuid() == 0:  # the worker runs as nobody, with the source folder covered
        assert "user nobody" in feedback and "PermissionError" in feedback


def _hangs_and_deadlocks_cost_only_their_task(out: Path) -> None:
    rows = {(row["learner"], row["task"]): row for row in _rows(out / "grades.csv")}
    assert rows[("looper", "check_matmul")]["reason"].startswith("ran past the time limit")
    assert "BarrierError" in rows[("deadlock", "check_block_sum")]["reason"]
    assert rows[("deadlock", "check_window_sum")]["status"] == PASSED


def _feedback_keeps_hidden_inputs_hidden(out: Path) -> None:
    partial = (out / "feedback" / "partial" / f"{learners.A01}.md").read_text()
    assert "Visible tests: ✓ vector_add" in partial
    assert "Hidden tests (other random inputs): failed, wrong values." in partial
    hidden_seeds = set()
    for name in (learners.A01, learners.A02):
        for task in load_assignment(ROOT / "solutions" / f"{name}.ipynb").tasks:
            hidden_seeds |= {seed for call in task.calls if call.hidden for seed in call.keywords["seeds"]}
    leak = re.compile(r"seed=(" + "|".join(map(str, sorted(hidden_seeds))) + r")\b|HIDDEN TESTS")
    for path in (out / "feedback").rglob("*.md"):
        assert not leak.search(path.read_text()), f"{path} shows a hidden test's input"
    edited = (out / "feedback" / "edited_locked" / f"{learners.A02}.md").read_text()
    assert "restored it from the source" in edited


def _grading_again_gives_the_same_rows(submissions: Path, out: Path, scratch: Path) -> None:
    subset = scratch / "subset"
    for learner in FAST_LEARNERS:
        (subset / learner).mkdir(parents=True)
        for notebook in (submissions / learner).iterdir():
            (subset / learner / notebook.name).write_bytes(notebook.read_bytes())
    run = _grade(subset, scratch / "again")
    assert run.returncode == 0, run.stdout + run.stderr
    first = [row for row in _rows(out / "grades.csv") if row["learner"] in FAST_LEARNERS]
    assert _rows(scratch / "again" / "grades.csv") == first


def test_the_fixture_class_gets_exactly_the_expected_grades(tmp_path):
    """One grading run of the whole class (kept to one test so that it runs once, xdist or not)."""
    submissions, out = tmp_path / "class", tmp_path / "graded"
    write_class(submissions, ROOT / "solutions" / f"{learners.A01}.ipynb")
    before = _digests(submissions)
    start = time.monotonic()
    run = _grade(submissions, out)
    seconds = time.monotonic() - start
    assert run.returncode == 0, run.stdout + run.stderr
    assert seconds < CLASS_BOUND_S, f"the fixture class took {seconds:.0f} s"
    assert "Statuses: passed" in run.stdout and "Slowest submissions:" in run.stdout
    assert _digests(submissions) == before, "grading modified a submission"
    _expected_grades(out)
    _cheater_scores_nothing_on_the_patched_tasks(out)
    _hangs_and_deadlocks_cost_only_their_task(out)
    _feedback_keeps_hidden_inputs_hidden(out)
    _grading_again_gives_the_same_rows(submissions, out, tmp_path)


def test_nbgrader_autograde_agrees_on_an_nbgrader_course(tmp_path):
    """The same fake notebooks in nbgrader's layout: nbgrader's autograde and classroom mode give the same
    points per task to a correct and a partly wrong learner."""
    submissions = tmp_path / "class"
    write_class(submissions, ROOT / "solutions" / f"{learners.A01}.ipynb")
    (tmp_path / "source" / ASSIGNMENT).mkdir(parents=True)
    name = f"{learners.A01}.ipynb"
    (tmp_path / "source" / ASSIGNMENT / name).write_bytes((ROOT / "solutions" / name).read_bytes())
    nbgrader(tmp_path, "generate_assignment", ASSIGNMENT, "--force")
    for learner in ("correct", "partial"):
        folder = tmp_path / "submitted" / learner / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / name).write_bytes((submissions / learner / name).read_bytes())
    nbgrader(tmp_path, "autograde", ASSIGNMENT, "--create", "--force")
    run = _grade(tmp_path / "submitted", tmp_path / "graded")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = _rows(tmp_path / "graded" / "grades.csv")
    ours = {(row["learner"], row["task"]): float(row["points"]) for row in rows}
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        theirs = {(learner, task): gradebook.find_grade(task, learners.A01, ASSIGNMENT, learner).score
                  for learner, task in ours}
    assert ours == theirs
    partial_points = sum(points for (learner, _), points in ours.items() if learner == "partial")
    assert partial_points == learners.EXPECTED["partial"][learners.A01][0]


# ------------------------------------------------------------------------------- the parts, without workers

def test_discovery_understands_both_layouts(tmp_path):
    for relative in ("alice/01_kernels_in_python.ipynb", "submitted/bob/ps01/01_kernels_in_python.ipynb",
                     "carol/.ipynb_checkpoints/01_kernels_in_python-checkpoint.ipynb", "stray.ipynb"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("{}")
    submissions, orphans = find_submissions(tmp_path)
    assert [(s.learner, s.path.name) for s in submissions] == [("alice", "01_kernels_in_python.ipynb"),
                                                                ("bob", "01_kernels_in_python.ipynb")]
    assert orphans == [tmp_path / "stray.ipynb"]


def test_a_notebook_of_another_assignment_is_refused():
    assignments = {name: load_assignment(ROOT / "solutions" / f"{name}.ipynb")
                   for name in (learners.A01, learners.A02)}
    cells = json.loads((ROOT / "solutions" / f"{learners.A02}.ipynb").read_text())["cells"]
    with pytest.raises(Unreadable, match=f"holds the cells of assignment {learners.A02}"):
        match_assignment(Path(f"{learners.A01}.ipynb"), cells, assignments)


def test_edited_locked_cells_are_restored_and_check_cells_never_run_from_the_submission():
    assignment = load_assignment(ROOT / "solutions" / f"{learners.A01}.ipynb")
    cells = json.loads((ROOT / "solutions" / f"{learners.A01}.ipynb").read_text())["cells"]
    cells[1]["source"] = "np.isclose = None"
    prepared = prepare(assignment, cells)
    sources = [source for _, source in prepared.cells]
    assert "np.isclose = None" not in sources and sources[0] == assignment.cells[0].source
    assert not any("tasks.check_" in source for source in sources)
    assert any("`setup` had been edited" in note for note in prepared.notes)


def _vector_add_reply(outputs: dict, report: dict) -> tuple:
    call = load_assignment(ROOT / "solutions" / f"{learners.A01}.ipynb").tasks[0].calls[0]
    task = call.steps[0].task
    results = []
    for case in task.cases:
        args = task.make_args(case)
        out = outputs.get("out", task.reference(case, args)["out"].astype(np.float32))
        n = case.params["n"]
        results.append({"outputs": {"out": encode_array(out)}, "launches": [],
                        "report": {key: value(n) for key, value in report.items()}, "error": None})
    return call, {"steps": [{"kind": "kernel", "results": results}], "failure": None}


def test_right_values_without_the_kernels_writes_fail():
    call, reply = _vector_add_reply({}, {"global_loads": lambda n: 2 * n, "global_stores": lambda n: 0})
    verdict = judge_call(call, reply)
    assert verdict.status == FAILED and "did not come from the kernel" in verdict.message
    call, reply = _vector_add_reply({}, {"global_loads": lambda n: 2 * n, "global_stores": lambda n: n})
    assert judge_call(call, reply).status == PASSED


def test_results_in_the_wrong_form_fail_and_never_decode_objects():
    call, reply = _vector_add_reply({"out": np.zeros(3, np.float64)}, {})
    assert judge_call(call, reply).kind == "malformed results"
    with pytest.raises(WireError):
        decode_array({"dtype": "|O", "shape": [1], "data": "AAAAAAAAAAA="})
    with pytest.raises(WireError):
        decode_array({"dtype": "<f4", "shape": [2], "data": "AAAAAA=="})
