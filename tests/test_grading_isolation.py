"""Submissions graded at the same time share one machine: its CPUs, its memory, the process count of a user
id. Each attack of the resource class (tests/grading/hostile_resources.py) runs beside an honest neighbour,
who must get full marks: as root, and as the user nobody in a cgroup delegated to it (what systemd's
``Delegate=yes`` gives an ordinary user's scope). Then the parts: deadlines in the submission's own CPU
time, limits that hold for all of a submission's processes together, worker user ids that two graders never
share, and a run that leaves no cgroup behind, interrupted or killed.

Every grader runs in a fresh cgroup of the test's (:mod:`grading.delegation`), so that what it leaves there
is exactly what it left. These tests need cgroups with the cpu, memory and pids controllers, and root: where
there are none they are skipped, with the reason (they fail instead when COURSE_REQUIRE_CGROUPS is set).
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from grading import hostile, hostile_resources
from grading.delegation import Delegation
from grading.fake_class import _learner_notebook
from grading.learners import A01
from notebook_runs import ROOT
from test_grading import HANG_GUARD_S, NOBODY, Run, _give_to, _private_folder, _reopening, cache_option

from course.grade.cgroups import Budget, Cgroups, Location, locate
from course.grade.channel import Channel, MachineBusy, WorkerTimeout
from course.grade.deadlines import Deadline
from course.grade.sandbox import Launch, python_folders
from course.grade.uids import Uids

USERS = ("root", "nobody")
MIB = 2**20
BOMB_WAIT_S = 120  # for the first grader's bomb to be in place: a guard, not a measure of speed


def _require_cgroups() -> None:
    found = locate()
    problem = "" if isinstance(found, Location) else found
    if not problem and os.geteuid() != 0:
        problem = "the suite does not run as root, so it cannot hand a cgroup to the user nobody"
    if problem and os.environ.get("COURSE_REQUIRE_CGROUPS"):
        pytest.fail(f"COURSE_REQUIRE_CGROUPS is set, but: {problem}")
    if problem:
        pytest.skip(f"no cgroups for these tests here: {problem}")


@pytest.fixture
def place(request, tmp_path):
    """(folder for the class and its output, the test's cgroup) for the user ``request.param``."""
    _require_cgroups()
    as_nobody = request.param == "nobody"
    base = _private_folder("gpusim-grade-resources-", NOBODY) if as_nobody else tmp_path
    delegation = Delegation(NOBODY if as_nobody else 0)
    try:
        yield base, delegation
    finally:
        delegation.close()
        if as_nobody:
            shutil.rmtree(base, ignore_errors=True)


def _command(base: Path, delegation: Delegation, submissions: Path, out: Path, *options: str,
             own_pid_namespace: bool = False) -> tuple[list[str], dict, Path]:
    """The command that grades ``submissions`` into ``out`` in ``delegation``'s cgroup, under the reaper
    (as nobody when ``delegation`` is nobody's), and the reaper's report."""
    report = out.parent / f"{out.name}-reaper.json"
    grader = [sys.executable, "-m", "course.grade", str(submissions), "--out", str(out),
              "--max-notebook-mb", str(hostile.MAX_NOTEBOOK_MB), *options]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    as_nobody = delegation.folders[0].stat().st_uid == NOBODY
    grader += cache_option(NOBODY if as_nobody else os.geteuid())
    if as_nobody:
        grader = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
                  *grader]
        env["HOME"] = str(base)
    command = [sys.executable, "-m", "grading.reaper", str(report), "--", *delegation.enter(), *grader]
    namespace = ["unshare", "--pid", "--fork", "--mount-proc"] if own_pid_namespace else []
    if as_nobody:
        script = _reopening([*python_folders(), ROOT, base])
        command = [*(namespace or ["unshare", "--mount"]), "--propagation", "private", "sh", "-c", script,
                   "sh", *command]
    else:
        command = [*namespace, *command]
    return command, env, report


def _finish(process: subprocess.Popen, report: Path, out: Path) -> Run:
    stdout, _ = process.communicate(timeout=HANG_GUARD_S)
    assert report.exists(), stdout[-3000:]
    reaped = json.loads(report.read_text())
    return Run(stdout, reaped["returncode"], reaped["survivors"], reaped["peak_kib"], out)


def _grade(base: Path, delegation: Delegation, submissions: Path, out: Path, *options: str,
           own_pid_namespace: bool = False) -> Run:
    command, env, report = _command(base, delegation, submissions, out, *options,
                                    own_pid_namespace=own_pid_namespace)
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    return _finish(process, report, out)


def _write(base: Path, group: str) -> tuple[Path, list[str]]:
    submissions = base / group.replace(" ", "_")
    names = hostile_resources.write(submissions, group)
    if base.stat().st_uid == NOBODY:
        _give_to(base, NOBODY)
    return submissions, names


def _grades_are(run: Run, names: list[str]) -> None:
    """Each learner got one of the grades :data:`hostile_resources.EXPECTED` allows it, for assignment 01."""
    got: dict[str, list[dict]] = {}
    for row in run.rows():
        assert row["assignment"] == A01, row
        got.setdefault(row["learner"], []).append(row)
    assert sorted(got) == sorted(names), run.stdout[-3000:]
    for name in names:
        grade = (sum(float(row["points"]) for row in got[name]), tuple(row["status"] for row in got[name]))
        assert grade in hostile_resources.EXPECTED[name], f"{name}: {[row['reason'] for row in got[name]]}"


def _clean(run: Run, delegation: Delegation) -> None:
    assert run.returncode == 0, run.stdout[-3000:]
    assert "Resources: each submission in a cgroup of its own" in run.stdout, run.stdout[-3000:]
    assert run.survivors == [], f"processes outlived the run: {run.survivors}"
    assert delegation.left() == [], "the run left cgroups behind"


# -------------------------------------------------------------------------------------- the attacks

@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.parametrize("place", USERS, indirect=True)
def test_a_cpu_burner_and_memory_holders_cost_only_themselves(place):
    """--jobs equal to the cores: the burner's 24 processes beside its neighbour, whose deadlines were
    measured on an idle machine; then three children that try to hold 3 GiB at once under a limit of 2."""
    base, delegation = place
    submissions, names = _write(base, "neighbours")
    run = _grade(base, delegation, submissions, base / "graded", "--jobs", str(os.cpu_count()))
    _clean(run, delegation)
    _grades_are(run, names)


def _bomb_processes() -> int:
    count = 0
    for name in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            count += Path(f"/proc/{name}/cmdline").read_bytes().startswith(f"{hostile.MARKER}-bomb".encode())
    return count


def _bomb_in_place(first: subprocess.Popen) -> None:
    """Wait until the first grader's bomb stops growing (at 255 processes, or where a limit stopped it)."""
    end, counts = time.monotonic() + BOMB_WAIT_S, [0]
    while time.monotonic() < end and first.poll() is None:
        counts.append(_bomb_processes())
        if counts[-1] >= 200 and counts[-1] == counts[-5:][0]:
            return
        time.sleep(0.5)
    output = first.stdout.read()[-3000:] if first.poll() is not None else ""
    pytest.fail(f"the bomb never stood (counts {counts[-5:]}): {output}")


def _grader_pid(submissions: Path) -> int:
    """The host's process id of the grader of ``submissions`` (inside its PID namespace it has another)."""
    wanted = f"{sys.executable}\0-m\0course.grade\0{submissions}\0".encode()  # not the reaper's
    for name in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{name}/cmdline").read_bytes().startswith(wanted):
                return int(name)
    raise LookupError(f"no grader of {submissions} runs")


@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.parametrize("place", USERS, indirect=True)
def test_two_graders_at_once_never_run_two_workers_as_one_user(place):
    """Two graders on one machine, each in a PID namespace of its own, so that they have the same process id
    (the old grader took worker user ids from it). Once the first one's bomb holds its 255 processes, that
    grader is paused (SIGSTOP), so that the bomb stays in place however slow the machine, while the second
    grader grades a learner who starts processes of its own; then it goes on."""
    base, delegation = place
    first_class, first_names = _write(base, "first grader")
    second_class, second_names = _write(base, "second grader")
    command, env, report = _command(base, delegation, first_class, base / "first", "--timeout", "30",
                                    own_pid_namespace=True)
    first = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    paused = None
    try:
        _bomb_in_place(first)
        paused = _grader_pid(first_class)
        os.kill(paused, signal.SIGSTOP)
        second = _grade(base, delegation, second_class, base / "second", "--timeout", "30",
                        own_pid_namespace=True)
    finally:
        if paused is not None:
            os.kill(paused, signal.SIGCONT)
        first_run = _finish(first, report, base / "first")
    _clean(second, delegation)
    _clean(first_run, delegation)
    _grades_are(second, second_names)
    _grades_are(first_run, first_names)


# ---------------------------------------------------------------------------------------- the parts

def _sleeper_class(folder: Path) -> Path:
    """One learner whose cell after setup sleeps, so that its worker is running when the grader is stopped."""
    notebook = _learner_notebook(A01, {hostile.AFTER("setup"): ["import time\ntime.sleep(600)\n"]})
    (folder / "sleeper").mkdir(parents=True)
    (folder / "sleeper" / f"{A01}.ipynb").write_text(json.dumps(notebook))
    return folder


def _start_grader(delegation: Delegation, submissions: Path, out: Path) -> subprocess.Popen:
    command = [*delegation.enter(), sys.executable, "-m", "course.grade", str(submissions), "--out", str(out),
               "--timeout", "30", "--sandbox", "off", *cache_option(os.geteuid())]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def _worker_running(delegation: Delegation, grader: subprocess.Popen) -> list[int]:
    """The processes in the grader's submission cgroups, once its worker sleeps in the learner's cell."""
    end = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < end and grader.poll() is None:
        pids = []
        for leaf in delegation.left():
            with contextlib.suppress(OSError):
                pids += [int(pid) for pid in (leaf / "cgroup.procs").read_text().split()]
        if any("sleep" in _waiting_in(pid) for pid in pids):
            return pids
        time.sleep(0.5)
    pytest.fail(f"the worker never ran: {grader.stdout.read()[-3000:] if grader.poll() is not None else ''}")


def _waiting_in(pid: int) -> str:
    """The kernel function a process waits in (hrtimer_nanosleep for time.sleep)."""
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/wchan").read_text()
    return ""


def _alive(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return False


@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.parametrize("place", ["root"], indirect=True)
def test_a_stopped_run_removes_its_cgroups_and_the_next_run_removes_a_killed_ones(place, tmp_path):
    """SIGTERM: the grader kills its workers, removes its cgroups and says so. SIGKILL leaves them, with an
    unsandboxed worker still running; the next grader started in the same cgroup kills it and removes them."""
    _, delegation = place
    submissions = _sleeper_class(tmp_path / "class")
    grader = _start_grader(delegation, submissions, tmp_path / "graded")
    workers = _worker_running(delegation, grader)
    grader.send_signal(signal.SIGTERM)
    output, _ = grader.communicate(timeout=HANG_GUARD_S)
    assert grader.returncode == 130 and "interrupted: every worker was stopped" in output, output[-3000:]
    assert delegation.left() == [] and not any(_alive(pid) for pid in workers)

    grader = _start_grader(delegation, submissions, tmp_path / "graded")
    workers = _worker_running(delegation, grader)
    grader.kill()
    grader.communicate(timeout=HANG_GUARD_S)
    assert delegation.left() and all(_alive(pid) for pid in workers)  # what a killed grader leaves
    (tmp_path / "empty").mkdir()
    nothing = _start_grader(delegation, tmp_path / "empty", tmp_path / "graded-empty")
    output, _ = nothing.communicate(timeout=HANG_GUARD_S)
    assert nothing.returncode == 0, output[-3000:]
    assert delegation.left() == [] and not any(_alive(pid) for pid in workers)


@contextlib.contextmanager
def _run_cgroups(budget: Budget):
    """A run's cgroups (under the test's own cgroup), and a check that closing them left none."""
    _require_cgroups()
    cgroups = Cgroups(budget, 1)
    runs = list(cgroups.runs.values())
    try:
        yield cgroups
    finally:
        cgroups.close()
    assert runs and not any(run.exists() for run in runs)


def _domain_channel(domain, script: str) -> Channel:
    argv = domain.wrap([sys.executable, "-c", script])
    return Channel(Launch(argv, dict(os.environ), "/", (), None, ()))


def test_deadlines_count_the_submissions_cpu_time_and_idleness_never_the_machines(monkeypatch):
    """A loop runs out of CPU time and a sleep out of idle time; a submission held to 2% of a CPU (as on a
    machine too busy to give it more) reaches the wall-clock bound: the machine was busy, not the learner."""
    monkeypatch.setattr("course.grade.deadlines.WALL_FACTOR", 2.0)
    monkeypatch.setattr("course.grade.deadlines.WALL_MARGIN_S", 3.0)
    cases = ((1, "while True:\n    pass", WorkerTimeout, r"after 1\.0 s of CPU time"),
             (1, "import time\ntime.sleep(600)", WorkerTimeout, r"after \d s of waiting without computing"),
             (0.02, "while True:\n    pass", MachineBusy, r"in \d+ s it got only 0\.\d s of CPU time"))
    for cpus, script, error, words in cases:
        with _run_cgroups(Budget(512 * MIB, 32, cpus)) as cgroups:
            domain = cgroups.domain()
            channel = _domain_channel(domain, script)
            with pytest.raises(error, match=words):
                channel.receive(Deadline(1.0, domain), MIB, lambda message: message)


FORKS_AND_HOLDS = '''
import os, sys, time
forked = 0
try:
    for _ in range(100):
        if os.fork() == 0:
            os.closerange(0, 3)  # the caller reads to the end of the output
            time.sleep(60)
            os._exit(0)
        forked += 1
except OSError:
    pass
print(forked, flush=True)
'''


def test_a_submissions_processes_are_limited_all_together_and_killed_with_it():
    """32 processes in all for the submission; its end kills every one, those in sessions of their own too."""
    with _run_cgroups(Budget(512 * MIB, 32)) as cgroups:
        domain = cgroups.domain()
        run = subprocess.run(domain.wrap([sys.executable, "-c", FORKS_AND_HOLDS]), capture_output=True,
                             text=True, timeout=60, start_new_session=True)
        assert 20 < int(run.stdout) < 32  # the sh that entered the cgroup became python: 1 + forked <= 32
        held = [int(pid) for pid in (domain.folders[0] / "cgroup.procs").read_text().split()]
        assert len(held) == int(run.stdout)  # the children outlived their parent, in the cgroup
        cgroups.release(domain)
        assert not any(_alive(pid) for pid in held)


def _graders_starting_at(start: int, count: int) -> list[Uids]:
    """``count`` graders' user id pools that all start at the same place (as two graders with the same pid
    did, when ids came from the pid)."""
    pools = [Uids() for _ in range(count)]
    for pool in pools:
        pool._next = start
    return pools


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root grader runs workers as user ids of their own")
def test_two_graders_never_lease_one_user_id_and_an_id_in_use_is_passed_over():
    first, second, third = _graders_starting_at(4242, 3)
    a, b = first.lease(), second.lease()
    try:
        assert b.uid == a.uid + 1  # a.uid is held
        holder = subprocess.Popen(["setpriv", f"--reuid={a.uid + 2}", "sleep", "60"])
        try:
            while f"\t{a.uid + 2}\t" not in Path(f"/proc/{holder.pid}/status").read_text():
                time.sleep(0.05)
            c = third.lease()
            assert c.uid == a.uid + 3  # a process of a dead grader's worker still runs as a.uid + 2
            c.release()
        finally:
            holder.kill()
            holder.wait()
    finally:
        a.release()
        b.release()
    fourth = _graders_starting_at(4242, 1)[0].lease()
    assert fourth.uid == a.uid  # given back
    fourth.release()


def test_without_cgroups_the_grader_says_so():
    """An ordinary user with no cgroup of its own (no systemd, no delegation): the summary warns."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become the user nobody")
    script = ("from course.grade.cgroups import Budget, Cgroups\n"
              "cgroups = Cgroups(Budget(2**30, 32), 1)\nprint(cgroups.statement()[0])\ncgroups.close()")
    run = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                          sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd="/")
    assert run.stdout.startswith("WARNING: no cgroup per submission ("), run.stderr[-2000:]
    assert "deadlines are wall-clock time" in run.stdout
