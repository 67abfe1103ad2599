"""The classroom grader's parts, each on its own: finding and reading submissions, the wire and the message
schemas, verdicts, a worker's channel and the sandbox. (Whole class runs: tests/test_grading.py.)"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from grading import learners
from notebook_runs import ROOT

from course.grade import protocol, wire
from course.grade.assignments import load_assignment
from course.grade.cache import GraderCache
from course.grade.channel import Channel, WorkerDied, WorkerTimeout
from course.grade.deadlines import Deadline
from course.grade.discovery import find_learners, select, unanswered
from course.grade.limits import Limits
from course.grade.restore import Unreadable, match_assignment, prepare, read_notebook
from course.grade.sandbox import Launch, Sandbox, Stage

A01 = f"{learners.A01}.ipynb"
MIB = 2**20


@pytest.fixture(scope="module")
def assignments():
    return {name: load_assignment(ROOT / "solutions" / f"{name}.ipynb")
            for name in (learners.A01, learners.A02)}


# ------------------------------------------------------------------------------------ finding notebooks

def test_discovery_understands_both_layouts(tmp_path):
    for relative in ("alice/01_kernels_in_python.ipynb", "submitted/bob/ps01/01_kernels_in_python.ipynb",
                     "carol/.ipynb_checkpoints/01_kernels_in_python-checkpoint.ipynb", "stray.ipynb",
                     "roster.csv"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("{}")
    found, orphans = find_learners(tmp_path)
    assert [(learner.name, [e.path.name for e in learner.notebooks]) for learner in found] == \
        [("alice", [A01]), ("bob", [A01]), ("carol", [])]
    assert orphans == [tmp_path / "stray.ipynb"]


def test_files_that_are_not_plain_notebooks_are_refused_without_being_opened(tmp_path, assignments):
    solved = (ROOT / "solutions" / A01).read_text()
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / A01)  # opening it for reading would block the grader
    (tmp_path / "link").mkdir()
    (tmp_path / "link" / A01).symlink_to("/dev/zero")  # reading it would never end
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / A01).write_text(solved + " " * 2 * MIB)
    (tmp_path / "folder_link").symlink_to(tmp_path / "big")
    found = {learner.name: learner for learner in find_learners(tmp_path)[0]}
    reasons = {}
    for name, learner in found.items():
        selection = select(learner, assignments, MIB)
        assert selection.submissions == []
        rows = selection.refusals + unanswered(learner, selection, [learners.A01])
        reasons[name] = [(row.assignment, row.status, row.reason) for row in rows]
    fifo = f"`{A01}` is a FIFO (named pipe), not a notebook file: hand in the file itself"
    assert reasons["fifo"] == [(learners.A01, "error", fifo)]
    assert "is a symbolic link" in reasons["link"][0][2]
    assert "over the limit of 1 MiB" in reasons["big"][0][2]
    assert "`folder_link` is a symbolic link, not a folder" in reasons["folder_link"][0][2]


def test_the_newest_of_several_notebooks_counts_and_a_dot_named_one_is_reported(tmp_path, assignments):
    solved = (ROOT / "solutions" / A01).read_text()
    (tmp_path / "ann").mkdir()
    for index, name in enumerate((A01, "copy.ipynb", "mine.ipynb")):
        (tmp_path / "ann" / name).write_text(solved)
        os.utime(tmp_path / "ann" / name, (1_700_000_000 + index, 1_700_000_000 + index))
    (tmp_path / "dot").mkdir()
    (tmp_path / "dot" / f".{A01}").write_text(solved)
    (tmp_path / "nothing").mkdir()
    found = {learner.name: learner for learner in find_learners(tmp_path)[0]}
    ann = select(found["ann"], assignments, 32 * MIB)
    assert [(s.path.name, s.assignment) for s in ann.submissions] == [("mine.ipynb", learners.A01)]
    assert "3 notebooks" in ann.submissions[0].notes[0] and ann.refusals == []
    graded = [learners.A01, learners.A02]
    dot = unanswered(found["dot"], select(found["dot"], assignments, 32 * MIB), graded)
    assert [(row.assignment, row.status) for row in dot] == [(learners.A01, "missing"),
                                                             (learners.A02, "missing")]
    assert "starts with a dot" in dot[0].reason and "starts with a dot" not in dot[1].reason
    nothing = unanswered(found["nothing"], select(found["nothing"], assignments, 32 * MIB), [])
    assert [(row.assignment, row.reason) for row in nothing] == [("-",
                                                                  "no notebook was found in this folder")]


def test_reading_never_follows_a_link_or_waits_on_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe.ipynb")
    (tmp_path / "zero.ipynb").symlink_to("/dev/zero")
    (tmp_path / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    for name, words in (("pipe.ipynb", "not a regular file"),
                        ("zero.ipynb", "cannot be opened as a plain file"),
                        ("deep.ipynb", "cannot be read as notebook JSON")):
        with pytest.raises(Unreadable, match=words):
            read_notebook(tmp_path / name, MIB)


def test_a_notebook_of_another_assignment_is_refused(assignments):
    cells = json.loads((ROOT / "solutions" / f"{learners.A02}.ipynb").read_text())["cells"]
    with pytest.raises(Unreadable, match=f"holds the cells of assignment {learners.A02}"):
        match_assignment(Path(A01), cells, assignments)


def test_edited_locked_cells_are_restored_and_check_cells_never_run_from_the_submission(assignments):
    assignment = assignments[learners.A01]
    cells = json.loads((ROOT / "solutions" / A01).read_text())["cells"]
    cells[1]["source"] = "np.isclose = None"
    prepared = prepare(assignment, cells)
    sources = [source for _, source in prepared.cells]
    assert "np.isclose = None" not in sources and sources[0] == assignment.cells[0].source
    assert not any("tasks.check_" in source for source in sources)
    assert any("`setup` had been edited" in note for note in prepared.notes)


# ------------------------------------------------------------------------------------ the wire, schemas

def test_depth_is_measured_before_parsing_and_strings_do_not_count():
    assert wire.measure(b'{"a": [1, {"b": "[[[[{{{{"}]}').depth == 3
    assert wire.loads(b'{"a": "' + b"[" * 10_000 + b'"}') == {"a": "[" * 10_000}
    for line in (b"[" * 100_000 + b"]" * 100_000, b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}", b"[1]", b"nope"):
        with pytest.raises(wire.WireError):
            wire.loads(line)


def test_a_line_reader_never_holds_more_than_the_cap_and_a_chunk():
    read, write = os.pipe()
    os.write(write, b'{"type": "ready"}\n' + b"x" * 60_000)
    os.close(write)
    reader = wire.LineReader(read)
    while (line := reader.line(1000)) is None:
        assert reader.fill(1000)
    assert line == b'{"type": "ready"}'
    with pytest.raises(wire.LineTooLong):
        while reader.line(1000) is None:
            reader.fill(1000)
    os.close(read)


def test_arrays_decode_only_as_plain_numbers_of_the_right_size():
    assert np.array_equal(wire.decode_array(wire.encode_array(np.arange(6).reshape(2, 3))),
                          np.arange(6).reshape(2, 3))
    for value in ({"dtype": "|O", "shape": [1], "data": "AAAAAAAAAAA="},
                  {"dtype": "<f4", "shape": [2], "data": "AAAAAA=="},
                  {"dtype": "<f4", "shape": [10**9, 10**9], "data": ""},
                  {"dtype": "<f4", "shape": [True], "data": ""},
                  [1, 2], {"dtype": "V8", "shape": [1], "data": "AAAAAAAAAAA="}):
        with pytest.raises(wire.WireError):
            wire.decode_array(value)


def _vector_add_call(assignments):
    return assignments[learners.A01].tasks[0].calls[0]


def _grayscale_call(assignments):
    return assignments[learners.A01].tasks[1].calls[0]


def test_forged_replies_are_refused_by_the_schema(assignments):
    vector_add, grayscale = _vector_add_call(assignments), _grayscale_call(assignments)
    kernel_step = {"kind": "kernel", "kernel": None, "plans": None, "error": {"type": "X", "message": "y"}}
    forged = [
        ({"missing": 5}, vector_add), ({"type": "missing", "names": ["os"]}, vector_add),
        ({"type": "ready", "cell_errors": 5}, vector_add),
        ({"type": "answer", "steps": "x", "failure": None}, vector_add),
        ({"type": "answer", "steps": [kernel_step, kernel_step], "failure": None}, vector_add),
        ({"type": "answer", "steps": [{"kind": "function", "results": []}], "failure": None}, vector_add),
        ({"type": "answer", "steps": [kernel_step], "failure": 5}, vector_add),
        ({"type": "answer", "steps": [{**kernel_step, "error": {"type": "X" * 10_000, "message": ""}}],
          "failure": None}, vector_add),
        ({"type": "answer", "steps": [{**kernel_step, "extra": 1}], "failure": None}, vector_add),
        ({"type": "missing", "names": [{"a": 1}]}, vector_add),  # unhashable: a TypeError, not a refusal
    ]
    for message, call in forged:
        with pytest.raises(wire.WireError):
            protocol.answer(message, call)
    for message in ({"type": "running", "cell": [0]}, {"type": "running", "cell": True}):
        with pytest.raises(wire.WireError):
            protocol.setup_message(message, {0, 1})
    checked = protocol.answer({"type": "answer", "steps": [kernel_step], "failure": None}, grayscale)
    assert checked["steps"][0]["error"] == {"type": "X", "message": "y"}


def test_launch_plans_name_only_the_cases_arrays_or_numbers():
    names = {"rgb", "gray", "height", "width"}
    launch = {"grid": [1, 1, 1], "block": [16, 16, 1], "shared": 0,
              "args": [{"arg": "rgb"}, {"arg": "gray"}, {"value": 5, "type": "int"},
                       {"value": 2.5, "type": "float32"}]}
    good = {"launches": [launch], "error": None}
    assert protocol._plan(good, names) == good
    base = {"grid": [1, 1, 1], "block": [1, 1, 1], "shared": 0, "args": []}
    for bad in ({**base, "grid": [1, 1]}, {**base, "shared": -1}, {**base, "args": [{"arg": "__import__"}]},
                {**base, "args": [{"arg": ["rgb"]}]},
                {**base, "args": [{"value": "os", "type": "int"}]},
                {**base, "args": [{"value": 10**100, "type": "int"}]}, {**base, "args": [{"value": 1}]}):
        with pytest.raises(wire.WireError):
            protocol._plan({"launches": [bad], "error": None}, names)
    with pytest.raises(wire.WireError):
        protocol._plan({"launches": [launch] * (protocol.MAX_LAUNCHES + 1), "error": None}, names)


def test_results_must_match_the_tasks_outputs(assignments):
    step = _vector_add_call(assignments).steps[0]
    case = step.task.cases[0]
    out = np.zeros(case.params["n"], np.float32)
    good = {"outputs": {"out": wire.encode_array(out)}, "report": {"global_loads": 2},
            "launches": [[[1, 1, 1], [32, 1, 1], 0]], "error": None}
    assert protocol.result(good, step, case)["report"] == {"global_loads": 2}
    for bad in ({**good, "outputs": {"out": wire.encode_array(out.astype(np.float64))}},
                {**good, "outputs": {"out": wire.encode_array(np.zeros(case.params["n"] + 1, np.float32))}},
                {**good, "outputs": {}}, {**good, "report": {"global_loads": -1}},
                {**good, "report": {"x": "1"}},
                {**good, "launches": [[1, 2, 3]]}, {**good, "error": "boom"}, {**good, "surprise": 1}):
        with pytest.raises(wire.WireError):
            protocol.result(bad, step, case)


def test_caps_admit_every_legitimate_answer_and_little_more(assignments):
    for assignment in assignments.values():
        for step in (step for task in assignment.tasks for call in task.calls for step in call.steps):
            results = [{"outputs": {output.name: wire.encode_array(step.task.make_args(case)[output.name])
                                    for output in step.task.outputs},
                        "report": dict.fromkeys(("global_loads", "global_stores", "shared_loads"), 10**9),
                        "launches": [[[65535, 65535, 64], [1024, 1, 1], 49152]] * 4,
                        "error": {"type": "E" * protocol.MAX_NAME, "message": "m" * protocol.MAX_TEXT}}
                       for case in step.task.cases]
            size = len(wire.dumps({"type": "results", "results": results}))
            assert size <= protocol.results_cap(step) <= 2 * size + MIB, step.task.name


# ------------------------------------------------------------------------------------------ the channel

def _channel(script: str) -> Channel:
    return Channel(Launch([sys.executable, "-c", script], dict(os.environ), "/", (), None, ()))


def test_a_flood_costs_the_worker_not_the_grader():
    channel = _channel("import os\nos.write(2, b'e' * 50 * 2**20)\nos.write(1, b'x' * 5 * 2**20 + b'\\n')")
    with pytest.raises(WorkerDied, match="longer than 1048576 bytes"):
        channel.receive(Deadline(60), MIB, lambda message: message)
    assert len(channel._stderr.tail) <= 8 * 2**10
    assert channel.process.returncode is not None  # killed


def _living_in_group(group: int) -> int:
    """Processes of a process group that still run (zombies waiting for init do not count)."""
    count = 0
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        count += int(fields[2]) == group and fields[0] != "Z"
    return count


def test_a_silent_worker_is_killed_at_its_deadline_with_its_children():
    channel = _channel("import subprocess, time\nsubprocess.Popen(['sleep', '300'])\ntime.sleep(300)")
    while _living_in_group(channel.process.pid) < 2:
        time.sleep(0.1)
    with pytest.raises(WorkerTimeout):
        channel.receive(Deadline(0.5), MIB, lambda message: message)
    time.sleep(0.5)
    assert _living_in_group(channel.process.pid) == 0


def test_a_worker_that_cannot_start_leaves_no_folder(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with pytest.raises(OSError):
        Channel(Launch([str(tmp_path / "no-such-python")], {}, "/", (), None, (home,)))
    assert not home.exists()


def test_a_worker_that_dies_says_how():
    channel = _channel("import os, sys\nsys.stderr.write('about to go\\n')\nsys.stderr.flush()\nos._exit(7)")
    with pytest.raises(WorkerDied, match="exit status 7; last words: about to go"):
        channel.receive(Deadline(30), MIB, lambda message: message)


# ------------------------------------------------------------------------------------------ the sandbox

PROBE = r'''
import json, os, socket, sys
seen = {"uid": os.getuid(), "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
seen["capabilities"] = [line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff")]
for name, path in (("secret", "/course/secret"), ("init", "/proc/1/environ"), ("course", sys.argv[1]),
                   ("notebook", os.path.expanduser("~/mine.ipynb"))):
    try:
        seen[name] = open(path).read()[:20]
    except OSError as error:
        seen[name] = type(error).__name__
with socket.socket() as client:
    client.settimeout(2)
    seen["network"] = client.connect_ex(("127.0.0.1", int(sys.argv[2])))
seen["staged"] = sorted(os.listdir("/course")), sorted(os.listdir("/course/course"))
import course.grade.runner, course.tasks.part01  # what the workers import, from the staged copy
seen["imported"] = course.tasks.part01.__file__
open("/tmp/left-behind", "w").write("x")
seen["writable"] = []
venv_parent = os.path.dirname(sys.prefix)
for folder in dict.fromkeys(("/", venv_parent, os.path.dirname(venv_parent), "/course", "/tmp")):
    try:
        open(os.path.join(folder, "planted.py"), "w").close()
        seen["writable"].append(folder)
    except OSError:
        pass
print(json.dumps(seen))
'''


def test_a_sandboxed_worker_sees_only_what_it_needs(tmp_path):
    sandbox = Sandbox("auto")
    try:
        if not sandbox.isolation.sandboxed:
            pytest.skip(f"bubblewrap cannot confine workers here: {sandbox.isolation.why_not}")
        (sandbox.learner_stage.course / "secret").write_text("root only")  # a worker given a notebook
        (sandbox.learner_stage.course / "secret").chmod(0o600)  # sees the learner's stage
        listener = __import__("socket").socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        launch = sandbox.launch([sys.executable, "-c", PROBE, str(ROOT / "solutions" / A01),
                                 str(listener.getsockname()[1])], {}, ("mine.ipynb", b"my notebook"))
        run = subprocess.run(launch.argv, env=launch.env, cwd=launch.cwd, pass_fds=launch.pass_fds,
                             capture_output=True, text=True, timeout=120)
        listener.close()
        for fd in launch.pass_fds:
            os.close(fd)
    finally:
        sandbox.close()
    seen = json.loads(run.stdout)
    assert seen["uid"] != 0 and seen["capabilities"] == ["0000000000000000"]
    if os.geteuid() == 0:  # a grader run as root: the worker cannot read root's files, nor its own init's
        assert seen["secret"] == seen["init"] == "PermissionError"
    assert seen["course"] == "FileNotFoundError" and seen["notebook"] == "my notebook"
    assert seen["staged"][0] == ["course", "gpusim", "secret", "utils.py"]
    assert "tasks" in seen["staged"][1] and "kernels" not in seen["staged"][1]
    assert seen["imported"] == "/course/course/tasks/part01.py"
    assert seen["writable"] == ["/tmp"]  # not the folders bwrap made above the venv, in a user namespace too
    assert seen["network"] != 0 and max(seen["pids"]) < 10  # its own PID namespace, no way out
    assert not Path("/tmp/left-behind").exists()


def test_the_stage_holds_the_simulator_the_checks_and_utils_and_nothing_else():
    stage = Stage()
    try:
        staged = sorted(path.relative_to(stage.course).as_posix() for path in stage.course.rglob("*"))
    finally:
        stage.remove()
    assert {name.split("/")[0] for name in staged} == {"gpusim", "course", "utils.py"}
    for expected in ("gpusim/launch.py", "course/tasks/part01.py", "course/grade/worker.py",
                     "course/kernelsource.py", "course/compilegate.py", "course/models/systolic.py"):
        assert expected in staged
    assert not [name for name in staged if name.startswith("course/kernels/") or "__pycache__" in name]
    assert "course/kernels" not in staged


TROJAN_RUN = r"""
import json, numpy as np, gpusim
from numba import cuda
from grading.hostile import VECTOR_ADD_TROJAN
import linecache
linecache.cache["<trojan>"] = (len(VECTOR_ADD_TROJAN), None, VECTOR_ADD_TROJAN.splitlines(True), "<trojan>")
namespace = {"cuda": cuda, "np": np}
exec(compile(VECTOR_ADD_TROJAN, "<trojan>", "exec"), namespace)
kernel = gpusim.jit(namespace["vector_add"])
a = np.ones(64, np.float32)
out = np.zeros(64, np.float32)
kernel[2, 32](a, a, out)
print(json.dumps(kernel.report.as_dict()))
"""


def test_the_trojan_kernel_patches_gpusim_when_it_runs_uncompiled():
    """The hostile class's trojan is a real attack: run under gpusim without Numba's compiler first, it
    rewrites gpusim's report from inside the kernel (the grader's runner compiles it first: refused)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}", "NUMBA_ENABLE_CUDASIM": "1"}
    run = subprocess.run([sys.executable, "-c", TROJAN_RUN], env=env, capture_output=True, text=True,
                         timeout=120)
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report == {"global_loads": 0}, run.stderr[-2000:]  # gpusim counted 192 reads, and said 0


def test_the_graders_cache_keeps_plain_numbers_for_the_same_course_and_refuses_the_rest(tmp_path):
    """What the grader keeps between runs (course.grade.cache) comes back for the same course code and
    notebooks; a changed notebook, a file that holds anything but plain numbers, or a folder that others may
    write to gives nothing back."""
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "a.ipynb").write_text("{}")
    folder = tmp_path / "cache"
    limits = {"a": Limits(12.5, 3.0, 2**30)}
    profiles = {"part05.tiled_matmul\nm=1": {"global_loads": 4}}
    GraderCache(folder, sources, ["a"], 2**30, "bwrap").save(profiles, limits)
    again = GraderCache(folder, sources, ["a"], 2**30, "bwrap")
    assert (again.profiles, again.limits) == (profiles, limits)
    assert GraderCache(folder, sources, ["a"], 2**31, "bwrap").limits == {}  # another memory limit
    (sources / "a.ipynb").write_text('{"changed": 1}')
    assert GraderCache(folder, sources, ["a"], 2**30, "bwrap").profiles == {}
    (sources / "a.ipynb").write_text("{}")
    again.path.write_text(json.dumps({"profiles": {"k": {"global_loads": "4; rm -rf /"}}, "limits": {}}))
    assert GraderCache(folder, sources, ["a"], 2**30, "bwrap").profiles == {}
    again.path.write_text(json.dumps({"profiles": {}, "limits": {"a": [float("inf"), 1.0, 1]}}))
    assert GraderCache(folder, sources, ["a"], 2**30, "bwrap").limits == {}
    folder.chmod(0o777)
    assert GraderCache(folder, sources, ["a"], 2**30, "bwrap").path is None
