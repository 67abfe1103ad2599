"""Classroom mode (``python -m course.grade``) against a class: the fixture class of fake learners and the
hostile class (one learner per attack family, tests/grading/hostile.py) get exactly the expected grades, in
the sandbox as root, as an ordinary user, and without the sandbox; no file outside OUT changes, no process
of the run survives it, nothing hidden reaches the feedback, and the grader's memory stays small.

Each class run is one test (so that it runs once, xdist or not). How long a run takes is measured by
bench/grade_speed.py, not asserted here.
"""

import csv
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from grading import hostile, learners
from grading.fake_class import write_class
from nbgrader.api import Gradebook
from notebook_runs import ROOT
from test_nbgrader_course import ASSIGNMENT, nbgrader

from course.grade.assignments import load_assignment
from course.grade.sandbox import Sandbox, python_folders

JOBS = 2
HANG_GUARD_S = 1500  # pytest's limit for one class run: a guard against hangs, not a measure of speed
# The grader's own peak memory, whatever its workers send or print. The reference solution's profiles of the
# hidden cases are measured in a child process (course.tasks.profiles.prefetch): its imports weigh there.
MAX_GRADER_KIB = 400 * 2**10
NOT_THE_COURSE = {".venv", ".git", "__pycache__", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"}
NOBODY = 65534
FAST_LEARNERS = ("correct", "partial", "broken_json", "messy")
HOST_TEMP = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


@functools.cache
def _sandbox_problem() -> str:
    sandbox = Sandbox("auto")
    sandbox.close()
    return sandbox.isolation.why_not


def _workers_have_their_own_user() -> bool:
    sandbox = Sandbox("off")
    sandbox.close()
    return sandbox.isolation.own_user


def _require_sandbox() -> None:
    problem = _sandbox_problem()
    if problem and os.environ.get("COURSE_REQUIRE_SANDBOX"):
        pytest.fail(f"COURSE_REQUIRE_SANDBOX is set, but bubblewrap cannot confine workers: {problem}")
    if problem:
        pytest.skip(f"bubblewrap cannot confine workers here ({problem}); the unsandboxed route is tested")


# ---------------------------------------------------------------------------------------------- a run

class Listeners:
    """A unix socket, an abstract unix socket and a TCP port on the host, for learners to try."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(folder / "grader.sock"))
        os.chmod(folder / "grader.sock", 0o777)
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.abstract = socket.socket(socket.AF_UNIX)
        self.folder, self.port = folder, self.tcp.getsockname()[1]

    def context(self, submissions: Path, out: Path, course: Path = ROOT,
                temp: tuple[str, ...] = hostile.HOST_TEMP) -> dict:
        context = hostile.context(submissions, out, self.folder, self.port, course, temp)
        self.abstract.bind("\0" + context["abstract"])
        for listener in (self.unix, self.tcp, self.abstract):
            listener.listen(16)
            listener.setblocking(False)
        return context

    def connections(self) -> int:
        count = 0
        for listener in (self.unix, self.tcp, self.abstract):
            while True:
                try:
                    listener.accept()[0].close()
                    count += 1
                except BlockingIOError:
                    break
        return count

    def close(self) -> None:
        for listener in (self.unix, self.tcp, self.abstract):
            listener.close()


@dataclass
class Run:
    stdout: str
    returncode: int
    survivors: list[str]
    peak_kib: int
    out: Path

    def rows(self) -> list[dict]:
        with (self.out / "grades.csv").open(newline="") as file:
            return list(csv.DictReader(file))


def _closed_ancestor(path: Path) -> Path | None:
    """The first folder on the way to ``path`` (itself included) that other users may not enter."""
    for folder in [*reversed(path.parents), path]:
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def _reopening(folders: list[Path]) -> str:
    """Shell commands that, in a private mount namespace, let other users reach ``folders``: each closed
    folder above one (such as /root, 0700, around pyenv's Python) is covered by an open, empty tmpfs into
    which only the needed folder is bound back."""
    needed = [(folder, _closed_ancestor(folder)) for folder in folders]
    needed = [(folder, closed) for folder, closed in needed if closed is not None]
    if any(folder == closed for folder, closed in needed):
        pytest.skip(f"{[str(f) for f, c in needed if f == c]} cannot be read by other users, so no ordinary "
                    f"user can run this course's Python here")
    lines = []
    for index, (folder, _) in enumerate(needed):
        lines.append(f"keep{index}=$(mktemp -d) && mount --bind {shlex.quote(str(folder))} $keep{index}")
    for closed in sorted({closed for _, closed in needed}):
        lines.append(f"mount -t tmpfs -o mode=755 tmpfs {shlex.quote(str(closed))}")
    for index, (folder, _) in enumerate(needed):
        target = shlex.quote(str(folder))
        lines.append(f"mkdir -p {target} && mount --move $keep{index} {target}")
    return " && ".join(lines + ['exec "$@"'])


def cache_option(owner: int) -> list[str]:
    """The grader's cache (course.grade.cache) for this suite, one folder per user that grades: the class
    runs after the first of each user start grading at once. It is the suite's own folder, never ~/.cache."""
    folder = Path(tempfile.gettempdir()) / f"gpu-course-grader-suite-{owner}"
    folder.mkdir(mode=0o700, exist_ok=True)
    if os.geteuid() == 0:
        os.chown(folder, owner, owner)
    return ["--cache", str(folder)]


def _grade(submissions: Path, out: Path, *options: str, as_nobody: bool = False) -> Run:
    """Grade a class as the command line does, under a subreaper that reports any process left behind."""
    report = out.parent / f"{out.name}-reaper.json"
    grader = [sys.executable, "-m", "course.grade", str(submissions), "--out", str(out), "--jobs", str(JOBS),
              "--max-notebook-mb", str(hostile.MAX_NOTEBOOK_MB),
              *cache_option(NOBODY if as_nobody else os.geteuid()), *options]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    if as_nobody:
        grader = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
                  *grader]
        env["HOME"] = str(out.parent)
    command = [sys.executable, "-m", "grading.reaper", str(report), "--", *grader]
    if as_nobody:
        script = _reopening([*python_folders(), ROOT, out.parent])
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert report.exists(), run.stdout[-3000:] + run.stderr[-3000:]
    reaped = json.loads(report.read_text())
    return Run(run.stdout + run.stderr, reaped["returncode"], reaped["survivors"], reaped["peak_kib"], out)


# ------------------------------------------------------------------------------------------ assertions

def _tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` (links and FIFOs as what they are, never followed) with a digest."""
    state = {}
    for parent, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if name not in NOT_THE_COURSE]
        for name in folders + files:
            path = Path(parent) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                state[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(mode):
                state[str(path)] = "link to " + os.readlink(path)
            else:
                state[str(path)] = stat.filemode(mode)
    return state


def _host_temp_files() -> list[Path]:
    return [path for folder in HOST_TEMP if folder.is_dir() for path in folder.iterdir()
            if path.name.startswith(hostile.MARKER)]


def _expected(*tables: dict, only: set[str] | None = None) -> dict[tuple[str, str], tuple]:
    expected = {}
    for table in tables:
        expected |= {(learner, assignment): grade for learner, by_assignment in table.items()
                     for assignment, grade in by_assignment.items() if only is None or learner in only}
    return expected


def _grades_are(run: Run, expected: dict[tuple[str, str], tuple]) -> None:
    got: dict[tuple[str, str], list[dict]] = {}
    for row in run.rows():
        got.setdefault((row["learner"], row["assignment"]), []).append(row)
    assert sorted(got) == sorted(expected), run.stdout[-3000:]
    for key, (points, statuses) in expected.items():
        rows = got[key]
        assert tuple(row["status"] for row in rows) == statuses, f"{key}: {[r['reason'] for r in rows]}"
        assert sum(float(row["points"]) for row in rows) == points, key


def _hidden_stays_hidden(run: Run) -> None:
    seeds = set()
    for name in (learners.A01, learners.A02):
        for task in load_assignment(ROOT / "solutions" / f"{name}.ipynb").tasks:
            seeds |= {seed for call in task.calls if call.hidden for seed in call.keywords["seeds"]}
    leak = re.compile(r"seed=(" + "|".join(map(str, sorted(seeds))) + r")\b|HIDDEN TESTS|LEAKED_SEED")
    for path in [run.out / "grades.csv", *(run.out / "feedback").rglob("*.md")]:
        assert not leak.search(path.read_text()), f"{path} shows a hidden test's input"


def _the_run_left_nothing(run: Run, before: dict[str, str], watched: list[Path]) -> None:
    assert run.returncode == 0, run.stdout[-3000:]
    assert run.survivors == [], f"processes outlived the run: {run.survivors}"
    assert run.peak_kib < MAX_GRADER_KIB, f"the grader held {run.peak_kib} KiB"
    after = {key: value for folder in watched for key, value in _tree(folder).items()}
    assert after == before, f"changed outside OUT: {sorted(set(after.items()) ^ set(before.items()))[:5]}"
    assert _host_temp_files() == []


def _feedback(run: Run, learner: str, assignment: str) -> str:
    return (run.out / "feedback" / learner / f"{assignment}.md").read_text()


def _fixture_class_details(run: Run) -> None:
    """What the fixture class's cheater, looper, deadlock and partial learners are told."""
    rows = {(row["learner"], row["task"]): row for row in run.rows()}
    assert rows[("looper", "check_matmul")]["reason"].startswith("ran past the time limit")
    assert "BarrierError" in rows[("deadlock", "check_block_sum")]["reason"]
    cheater = _feedback(run, "cheater", learners.A01)
    assert "`setup` had been edited; the grader restored it" in cheater
    assert "FileNotFoundError" in cheater  # the source notebook it tried to read is not in its sandbox
    partial = _feedback(run, "partial", learners.A01)
    # its kernel overfits n = 1031, past every visible case: the visible tests refuse the constant itself
    assert "the constant 1031" in partial and "never tested" in partial
    assert "restored it from the source" in _feedback(run, "edited_locked", learners.A02)


def _hostile_class_details(run: Run) -> None:
    """The notes that tell hostile learners what happened to their notebooks."""
    forger = _feedback(run, "forger", learners.A01)
    assert forger.count("the grader ran the notebook again without it") == 3
    assert "nested 100001 deep" in forger and "longer than" in forger
    exiter = _feedback(run, "exiter", learners.A01)
    assert "exit status 3" in exiter and "SIGSEGV" in exiter and "SIGKILL" in exiter
    twins = _feedback(run, "twins", learners.A01)
    assert "3 notebooks" in twins and "`final version.ipynb`, was graded" in twins
    reasons = {(row["learner"], row["assignment"]): row["reason"] for row in run.rows()}
    assert "starts with a dot" in reasons[("dotted", learners.A01)]
    assert "FIFO" in reasons[("fifo", learners.A01)] and "FIFO" in reasons[("ghost", learners.A02)]
    assert "symbolic link" in reasons[("linker", learners.A02)]
    assert "symbolic link" in reasons[("copycat", learners.A01)]
    assert "over the limit" in reasons[("bloated", learners.A01)]


def _private_folder(prefix: str, owner: int | None = None) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    if owner is not None:
        os.chown(folder, owner, owner)
    return folder


def _give_to(folder: Path, owner: int) -> None:
    for parent, folders, files in os.walk(folder):
        for name in folders + files:
            os.lchown(Path(parent) / name, owner, owner)


# -------------------------------------------------------------------------------------------- the runs

@pytest.mark.timeout(HANG_GUARD_S)
def test_the_fixture_and_hostile_classes_get_exactly_the_expected_grades(tmp_path):
    """One sandboxed run of both classes together: the attacks aim at the honest learners beside them."""
    _require_sandbox()
    submissions, out = tmp_path / "class", tmp_path / "graded"
    listeners = Listeners(tmp_path / "sockets")
    try:
        write_class(submissions, ROOT / "solutions" / f"{learners.A01}.ipynb")
        hostile.write_hostile_class(submissions, listeners.context(submissions, out))
        watched = [submissions, ROOT]
        before = {key: value for folder in watched for key, value in _tree(folder).items()}
        run = _grade(submissions, out, "--sandbox", "bwrap")
        assert listeners.connections() == 0
    finally:
        listeners.close()
    _the_run_left_nothing(run, before, watched)
    assert "Sandbox: bubblewrap" in run.stdout and "Statuses: passed" in run.stdout
    _grades_are(run, _expected(learners.EXPECTED, hostile.EXPECTED))
    _hidden_stays_hidden(run)
    _fixture_class_details(run)
    _hostile_class_details(run)
    again = _grade(_subset(submissions, tmp_path / "subset"), tmp_path / "again", "--timeout", "30")
    assert again.rows() == [row for row in run.rows() if row["learner"] in FAST_LEARNERS]


def _subset(submissions: Path, folder: Path) -> Path:
    for learner in FAST_LEARNERS:
        shutil.copytree(submissions / learner, folder / learner)
    return folder


@pytest.mark.timeout(HANG_GUARD_S)
def test_an_ordinary_user_grades_the_hostile_class_in_the_sandbox():
    """The grader run as the user nobody (the suite runs as root here): bubblewrap then confines workers
    through a user namespace, and the hostile class grades exactly as it does under root."""
    if os.geteuid() != 0:
        pytest.skip("the suite runs as an ordinary user already: the other class runs are this test")
    _require_sandbox()
    base = _private_folder("gpusim-grade-nobody-", NOBODY)
    try:
        submissions, out = base / "class", base / "graded"
        listeners = Listeners(base / "sockets")
        try:
            fixture = base / "fixture"
            write_class(fixture, ROOT / "solutions" / f"{learners.A01}.ipynb")
            for learner in ("correct", "partial"):
                shutil.copytree(fixture / learner, submissions / learner)
            hostile.write_hostile_class(submissions, listeners.context(submissions, out))
            _give_to(base, NOBODY)
            watched = [submissions, ROOT]
            before = {key: value for folder in watched for key, value in _tree(folder).items()}
            run = _grade(submissions, out, "--sandbox", "bwrap", as_nobody=True)
            assert listeners.connections() == 0
        finally:
            listeners.close()
        _the_run_left_nothing(run, before, watched)
        assert "Sandbox: bubblewrap" in run.stdout
        _grades_are(run, _expected(learners.EXPECTED, hostile.EXPECTED, only={"correct", "partial",
                                                                                *hostile.EXPECTED}))
        _hidden_stays_hidden(run)
        _hostile_class_details(run)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.timeout(HANG_GUARD_S)
def test_without_the_sandbox_the_grader_protects_itself_and_says_what_is_open(tmp_path):
    """--sandbox off: every attack on the grader, the channel, the input rules and the simulator still
    fails; the attacks that only the sandbox stops are run against decoys and do work, as the warning says."""
    submissions, out, decoys = tmp_path / "class", tmp_path / "graded", _private_folder("gpusim-grade-decoy-")
    confined = set(hostile.EXPECTED) - set(hostile.NEEDS_SANDBOX)
    unconfined = {name: grades for name, grades in hostile.UNCONFINED.items()  # as the suite's own user, the
                  if name != "survivor" or _workers_have_their_own_user()}  # survivor would kill pytest
    listeners = Listeners(decoys / "sockets")
    try:
        (decoys / "course" / "solutions").mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / f"{learners.A01}.ipynb", decoys / "course" / "solutions")
        for folder in ("course", "submissions/someone", "out", "tmp"):
            (decoys / folder).mkdir(parents=True, exist_ok=True)
            (decoys / folder).chmod(0o777)
        write_class(tmp_path / "fixture", ROOT / "solutions" / f"{learners.A01}.ipynb")
        shutil.copytree(tmp_path / "fixture" / "correct", submissions / "correct")
        context = listeners.context(decoys / "submissions", decoys / "out", decoys / "course",
                                    (str(decoys / "tmp"),))
        hostile.write_hostile_class(submissions, context, {*confined, *unconfined})
        before = _tree(submissions)
        run = _grade(submissions, out, "--sandbox", "off")
        connections = listeners.connections()
    finally:
        listeners.close()
        shutil.rmtree(decoys, ignore_errors=True)
    assert run.returncode == 0, run.stdout[-3000:]
    assert "WARNING: no sandbox (turned off with --sandbox off)" in run.stdout
    assert "NOT isolated: learner code can read every file its user can read" in run.stdout
    assert _tree(submissions) == before
    _grades_are(run, _expected({"correct": learners.EXPECTED["correct"]}, hostile.EXPECTED, unconfined,
                               only={"correct", *confined, *unconfined}))
    _hidden_stays_hidden(run)
    assert connections == 3  # the unix, abstract and TCP sockets each took the caller's connection
    survived = any(f"{hostile.MARKER}-survivor" in survivor for survivor in run.survivors)
    cgroups = "Resources: each submission in a cgroup of its own" in run.stdout  # killed with its submission
    assert survived == ("survivor" in unconfined and not cgroups)
    assert run.peak_kib < MAX_GRADER_KIB


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
    assert run.returncode == 0, run.stdout[-3000:]
    ours = {(row["learner"], row["task"]): float(row["points"]) for row in run.rows()}
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        theirs = {(learner, task): gradebook.find_grade(task, learners.A01, ASSIGNMENT, learner).score
                  for learner, task in ours}
    assert ours == theirs
    partial_points = sum(points for (learner, _), points in ours.items() if learner == "partial")
    assert partial_points == learners.EXPECTED["partial"][learners.A01][0]
