"""Grading at class scale, against the same class graded on one machine by ``python -m course.grade``:

* shards (``--shard K/N``) merged by ``python -m course.grade merge`` give the same grades.csv and feedback,
  on a real single-node Slurm cluster (Debian's slurm-wlm and munge) through ``course.grade.slurm``; a
  missing, unfinished, duplicated or other-course shard is refused by name;
* Gradescope's autograder zip, laid out as Gradescope lays it out, and PrairieLearn's external-grader entry
  point write results files that follow the platforms' documented formats and give each task the points of
  grades.csv, for a learner's notebooks, a crashing notebook, an unreadable one, and nothing handed in; a
  learner's code that writes the results file itself changes nothing;
* ``--gpu-kernels`` keeps the kernels of passed tasks only, and course.grade.gpu rebuilds, runs, checks and
  ranks them (here with gpusim standing in for the GPU, at small sizes).
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from grading import hostile, learners, platform_schemas
from grading.fake_class import write_class
from grading.slurm_cluster import SlurmCluster, missing
from notebook_runs import ROOT
from test_grading import Listeners, _sandbox_problem, cache_option

import gpusim
from course import kernelsource
from course.grade import gpu, preview
from course.grade.gputiming import Device
from course.grade.shards import MANIFEST, Shard, ShardError, merge

pytestmark = pytest.mark.xdist_group("grading_scale")  # one worker grades the class once for all tests
CLASS = ("correct", "partial", "broken_json", "messy")
ASSIGNMENTS = (learners.A01, learners.A02)
OPTIONS = ("--timeout", "30", "--jobs", "2")  # fixed deadlines: the same in every run, whatever the path
GUARD_S = 900
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
FORGED_RESULTS = '''
import json, os, pathlib
for root in {os.environ.get("AUTOGRADER_ROOT", "/autograder"), "/autograder", "/grade"}:
    try:
        path = pathlib.Path(root) / "results" / "results.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"score": 1000, "tests": []}))
    except OSError:
        pass
'''


def _rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def _points(rows: list[dict], learner: str) -> dict[tuple[str, str], float]:
    return {(row["assignment"], row["task"]): float(row["points"]) for row in rows
            if row["learner"] == learner}


@pytest.fixture(scope="module")
def one_machine(tmp_path_factory):
    """The class graded on one machine: its folder and grades.csv rows."""
    base = tmp_path_factory.mktemp("scale")
    write_class(base / "fixture", ROOT / "solutions" / f"{learners.A01}.ipynb")
    for learner in CLASS:
        shutil.copytree(base / "fixture" / learner, base / "class" / learner)
    graded = subprocess.run([sys.executable, "-m", "course.grade", str(base / "class"), "--out",
                             str(base / "one"), "--gpu-kernels", *OPTIONS, *cache_option(os.geteuid())],
                            cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=GUARD_S)
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    return base, _rows(base / "one" / "grades.csv")


# ------------------------------------------------------------------------------------------------ shards

def test_shards_split_a_class_into_disjoint_parts_that_cover_it():
    names = ["bob", "alice", "jos\udce9", "-rf", "zoë", *(f"learner{i}" for i in range(20))]
    for count in (1, 2, 3, 7, 30):
        parts = [Shard(index, count).picks(names) for index in range(count)]
        assert sorted(name for part in parts for name in part) == sorted(names)
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
    for text in ("2/2", "-1/2", "1/0", "a/b", "1", "0/10001"):
        with pytest.raises(ValueError):
            Shard.parse(text)


def _fake_shard(folder: Path, index: int, count: int, learners_: list[str], course: str = "c0ffee",
                finished: bool = True) -> Path:
    (folder / "feedback").mkdir(parents=True)
    rows = [["learner", "assignment", "task", "points", "max_points", "status", "reason"]]
    for learner in learners_:
        rows.append([learner, learners.A01, "check_vector_add", "1", "1", "passed", ""])
        (folder / "feedback" / learner).mkdir()
        (folder / "feedback" / learner / f"{learners.A01}.md").write_text(f"# {learner}\n")
    with (folder / "grades.csv").open("w", newline="") as file:
        csv.writer(file).writerows(rows)
    if finished:
        manifest = {"shard": index, "shards": count, "course": course, "learners": sorted(learners_)}
        (folder / MANIFEST).write_text(json.dumps(manifest))
    return folder


def test_a_merge_refuses_missing_unfinished_duplicated_and_other_course_shards_naming_them(tmp_path):
    zero = _fake_shard(tmp_path / "s0", 0, 3, ["carol", "alice"])
    one = _fake_shard(tmp_path / "s1", 1, 3, ["bob"])
    two = _fake_shard(tmp_path / "s2", 2, 3, ["dave"])
    cases = {
        "shard 2 of 3: no finished output": [zero, one],
        "no shard.json: the shard did not finish": [zero, one, _fake_shard(tmp_path / "u", 2, 3, ["d"],
                                                                           finished=False)],
        "shard 1 appears twice": [zero, one, _fake_shard(tmp_path / "again", 1, 3, ["eve"]), two],
        "different course code": [zero, one, _fake_shard(tmp_path / "other", 2, 3, ["dave"], "bad")],
        "learner bob was graded by shards 1 and 2": [zero, one, _fake_shard(tmp_path / "dup", 2, 3, ["bob"])],
        "cut for different class sizes": [zero, one, _fake_shard(tmp_path / "four", 2, 4, ["dave"])],
    }
    for expected, folders in cases.items():
        with pytest.raises(ShardError, match=expected):
            merge(folders, tmp_path / "merged")
        assert not (tmp_path / "merged").exists()
    merge([two, zero, one], tmp_path / "merged")
    assert [row["learner"] for row in _rows(tmp_path / "merged" / "grades.csv")] == ["alice", "bob", "carol",
                                                                                     "dave"]
    assert sorted(path.parent.name for path in (tmp_path / "merged" / "feedback").rglob("*.md")) == \
        ["alice", "bob", "carol", "dave"]


@pytest.mark.timeout(GUARD_S)
def test_on_a_real_slurm_cluster_the_merged_shards_equal_the_one_machine_grades(one_machine, tmp_path):
    problem = missing()
    if problem:
        if os.environ.get("COURSE_REQUIRE_SLURM"):
            pytest.fail(f"no Slurm cluster can be started: {problem}")
        pytest.skip(problem)
    base, _ = one_machine
    out = tmp_path / "slurm"
    with SlurmCluster(tmp_path / "cluster") as cluster:
        submitted = subprocess.run([sys.executable, "-m", "course.grade.slurm", str(base / "class"),
                                    "--shards", "3", "--out", str(out), "--wait", *OPTIONS,
                                    *cache_option(os.geteuid())],
                                   cwd=ROOT, env={**ENV, **cluster.env, "PYTHONPATH": ENV["PYTHONPATH"]},
                                   capture_output=True, text=True, timeout=GUARD_S)
        logs = cluster.logs()
    shown = "\n".join(path.read_text(errors="replace")[-2000:] for path in sorted((out / "logs").glob("*")))
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr + shown + logs
    assert sorted(path.name for path in (out / "shards").iterdir()) == ["0", "1", "2"]
    assert (out / "grades.csv").read_bytes() == (base / "one" / "grades.csv").read_bytes()
    ours, theirs = ({path.relative_to(folder): path.read_bytes()
                     for path in (folder / "feedback").rglob("*.md")} for folder in (out, base / "one"))
    assert ours == theirs and len(ours) == 2 * len(CLASS)


# ------------------------------------------------------------------------------------------- platforms

def _gradescope(tmp_path: Path, notebooks: dict[str, bytes] | None) -> dict:
    """Build the autograder zip, lay it out as Gradescope does, hand in ``notebooks`` (None: no submission
    folder at all) and run run_autograder; its results.json, checked against Gradescope's schema."""
    zip_path = tmp_path / "autograder.zip"
    subprocess.run([sys.executable, "-m", "course.grade.platforms", "package", "--out", str(zip_path),
                    *(f"--assignment={name}" for name in ASSIGNMENTS)], cwd=ROOT, env=ENV, check=True,
                   capture_output=True)
    root = tmp_path / "autograder"
    with zipfile.ZipFile(zip_path) as archive:
        assert {"setup.sh", "run_autograder"} <= set(archive.namelist())
        archive.extractall(root / "source")
    (root / "run_autograder").write_bytes((root / "source" / "run_autograder").read_bytes())
    (root / "run_autograder").chmod(0o755)
    if notebooks is not None:
        (root / "submission").mkdir()
        for name, data in notebooks.items():
            (root / "submission" / name).write_bytes(data)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "COURSE_PYTHON": sys.executable, "PYTHONPATH": ""}
    run = subprocess.run([str(root / "run_autograder"), *OPTIONS], env=env, capture_output=True, text=True,
                         timeout=GUARD_S)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, platform_schemas.GRADESCOPE)
    return results


def _scored(results: dict) -> dict[tuple[str, str], float]:
    return {tuple(test["name"].split(" / ")): test["score"] for test in results["tests"]
            if not test["name"].endswith(": visible tests")}


def test_gradescope_gives_each_task_the_points_of_grades_csv_and_hides_only_the_hidden(one_machine, tmp_path):
    base, rows = one_machine
    notebook = base / "class" / "partial"
    results = _gradescope(tmp_path, {path.name: path.read_bytes() for path in notebook.glob("*.ipynb")})
    assert _scored(results) == _points(rows, "partial")
    assert results["score"] == sum(_points(rows, "partial").values())
    for test in results["tests"]:
        assert (test["visibility"] == "after_published") == ("Hidden tests" in test["output"])
        assert "seed=" not in test["output"] or test["visibility"] == "visible"
    assert "points" not in results["output"]  # the total would tell hidden results before publishing
    assert "```" not in json.dumps(results)  # plain text: the feedback files' Markdown fences left out
    before = preview.render(results, before_publishing=True)
    assert "hidden until the grades are published" in before and "Hidden tests (other" not in before
    assert "Visible tests" in before and "Hidden tests (other" in preview.render(results)


def test_the_results_preview_escapes_learner_text():
    page = preview.render({"score": 0, "output": "<b>x</b>", "tests": [
        {"name": "<script>alert(1)</script>", "score": 0, "max_score": 1, "output": "</pre><img src=x>"}]})
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page


def test_gradescope_reports_nothing_handed_in_an_unreadable_notebook_and_a_crash(one_machine, tmp_path):
    base, rows = one_machine
    nothing = _gradescope(tmp_path / "nothing", None)
    assert nothing["score"] == 0 and "no notebook handed in" in nothing["output"]
    assert {key for key in _scored(nothing)} == {key for key in _points(rows, "correct")}
    broken = base / "class" / "broken_json" / f"{learners.A01}.ipynb"
    unreadable = _gradescope(tmp_path / "unreadable", {broken.name: broken.read_bytes()})
    assert unreadable["score"] == 0 and all(test["score"] == 0 for test in unreadable["tests"])
    context = hostile.context(tmp_path / "class", tmp_path / "out", tmp_path, 0, ROOT)
    hostile.write_hostile_class(tmp_path / "class", context, {"exiter"})
    crashing = tmp_path / "class" / "exiter" / f"{learners.A01}.ipynb"
    crashed = _gradescope(tmp_path / "crashed", {crashing.name: crashing.read_bytes()})
    assert crashed["score"] == hostile.EXPECTED["exiter"][learners.A01][0]


def _gradescope_run(root: Path) -> dict:
    """run_autograder's work for the submission laid out under ``root``: the entry point, as a process."""
    run = subprocess.run([sys.executable, "-m", "course.grade.platforms", "gradescope", "--root", str(root),
                          *(f"--assignment={name}" for name in ASSIGNMENTS), *OPTIONS,
                          "--max-notebook-mb", str(hostile.MAX_NOTEBOOK_MB), *cache_option(os.geteuid())],
                         cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=GUARD_S)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, platform_schemas.GRADESCOPE)
    return results


def _by_assignment(results: dict) -> dict[str, tuple]:
    """(points, passed or failed per task) per assignment, as hostile.EXPECTED states grades."""
    grades: dict[str, list] = {}
    for test in results["tests"]:
        if test["name"].endswith(": visible tests"):
            continue
        assignment = test["name"].split(" / ")[0]
        grades.setdefault(assignment, []).append(test)
    return {name: (sum(test["score"] for test in tests),
                   tuple("passed" if test["status"] == "passed" else "failed" for test in tests))
            for name, tests in grades.items()}


@pytest.mark.timeout(GUARD_S)
def test_the_hostile_class_gets_the_same_grades_through_gradescope(tmp_path):
    """Every hostile learner's folder handed in alone, as Gradescope hands a submission to its container:
    the same points per task as make grade gives them (tests/grading/hostile.py)."""
    sandboxed = not _sandbox_problem()
    names = sorted(set(hostile.EXPECTED) - (set() if sandboxed else set(hostile.NEEDS_SANDBOX)))
    listeners = Listeners(tmp_path / "sockets")
    try:
        context = listeners.context(tmp_path / "class", tmp_path / "out")
        hostile.write_hostile_class(tmp_path / "class", context, set(names))
        for name in names:
            (tmp_path / "roots" / name).mkdir(parents=True)
            if (tmp_path / "class" / name).exists():
                os.rename(tmp_path / "class" / name, tmp_path / "roots" / name / "submission")
        with ThreadPoolExecutor(2) as pool:
            results = dict(zip(names, pool.map(_gradescope_run, [tmp_path / "roots" / n for n in names]),
                               strict=True))
    finally:
        listeners.close()
    flag = {"passed": "passed"}
    wrong = {}
    for name in names:
        expected = {assignment: (points, tuple(flag.get(status, "failed") for status in statuses))
                    for assignment, (points, statuses) in hostile.EXPECTED[name].items()}
        if _by_assignment(results[name]) != expected:
            wrong[name] = (_by_assignment(results[name]), expected)
    assert wrong == {}, wrong


def test_prairielearn_results_follow_its_format_and_a_forged_results_file_changes_nothing(one_machine,
                                                                                           tmp_path):
    base, rows = one_machine
    notebook = json.loads((base / "class" / "correct" / f"{learners.A01}.ipynb").read_text())
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                              "source": FORGED_RESULTS})
    root = tmp_path / "grade"
    (root / "student").mkdir(parents=True)
    (root / "student" / f"{learners.A01}.ipynb").write_text(json.dumps(notebook))
    env = {**ENV, "AUTOGRADER_ROOT": str(root)}
    run = subprocess.run([sys.executable, "-m", "course.grade.platforms", "prairielearn", "--root", str(root),
                          f"--assignment={learners.A01}", *OPTIONS], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=GUARD_S)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    data = (root / "results" / "results.json").read_bytes()
    assert len(data) < platform_schemas.MAX_PRAIRIELEARN_BYTES
    results = json.loads(data)
    jsonschema.validate(results, platform_schemas.PRAIRIELEARN)
    expected = {key: points for key, points in _points(rows, "correct").items() if key[0] == learners.A01}
    assert {tuple(test["name"].split(" / ")): test["points"] for test in results["tests"]} == expected
    assert results["gradable"] and results["score"] == 1.0
    nothing = tmp_path / "nothing"
    subprocess.run([sys.executable, "-m", "course.grade.platforms", "prairielearn", "--root", str(nothing),
                    f"--assignment={learners.A01}", *OPTIONS], cwd=ROOT, env=ENV, check=True,
                   capture_output=True)
    empty = json.loads((nothing / "results" / "results.json").read_text())
    jsonschema.validate(empty, platform_schemas.PRAIRIELEARN)
    assert empty["gradable"] is False and "no notebook handed in" in " ".join(empty["format_errors"])


# ------------------------------------------------------------------------------------- GPU-timed tasks

class SimulatedDevice(Device):
    """The protocol's device on the CPU: host arrays, one stream, events read from a clock."""

    stream = 0

    def upload(self, array):
        return np.asarray(array)[()] if np.ndim(array) == 0 else np.array(array, copy=True)

    def poison(self, array):
        array[...] = np.nan

    def flush_l2(self):
        pass

    def cover(self, ms):
        pass

    def synchronize(self):
        pass

    def record(self):
        return time.perf_counter()

    def wait(self, event):
        pass

    def elapsed_ms(self, start, stop):
        return (stop - start) * 1e3

    def download(self, array):
        return np.array(array, copy=True)


SMALL = {"vector_add": {"n": 300, "threads": 64}, "grayscale": {"height": 9, "width": 7, "block_x": 4,
                                                                 "block_y": 4},
         "matmul": {"m": 9, "k": 7, "n": 5, "block_x": 4, "block_y": 4}}


def test_gpu_kernels_of_passed_tasks_are_kept_rebuilt_run_checked_and_ranked(one_machine):
    base, rows = one_machine
    data = json.loads((base / "one" / gpu.KERNELS).read_text())
    kept = {(entry["learner"], entry["grade_id"]) for entry in data["kernels"]}
    passed = {(row["learner"], row["task"]) for row in rows if row["status"] == "passed"}
    assert kept == passed  # every task of 01 and 02 has a kernel the grader launches
    assert ("partial", "check_matmul") in kept and ("partial", "check_grayscale") not in kept
    ranked = gpu.time_entries(data["kernels"], SimulatedDevice(),
                              lambda spec: gpusim.jit(kernelsource.rebuild(spec)), {}, sizes=SMALL,
                              repetitions=2, warmup=0)
    assert {(row["task"], row["learner"]) for row in ranked} == {
        (entry["task"], entry["learner"]) for entry in data["kernels"] if entry["task"] in SMALL}
    assert all(row["refused"] == "" and row["rank"] != "-" and len(row["times_ms"]) == 2 for row in ranked)
    gpu.plot_leaderboard(ranked, base / "leaderboard.png", "gpusim")
    assert (base / "leaderboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    timed = next(entry for entry in data["kernels"] if entry["task"] in SMALL)
    broken = dict(timed, kernel={"version": 1})
    wrong = gpu.time_entries([broken], SimulatedDevice(), lambda spec: gpusim.jit(kernelsource.rebuild(spec)),
                             {}, sizes=SMALL, repetitions=1, warmup=0)
    assert wrong[0]["rank"] == "-" and wrong[0]["refused"].startswith("could not be built")
