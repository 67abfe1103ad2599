"""Nothing a learner writes is trusted (issue 24, families 2 to 6): names and messages are data, parsing cost
is the grader's, hidden tests leak one bit per task, and plain-Python tasks are measured on the trusted side.

One test per family on the grader's parts (each fails on the grader before these fixes), then the untrusted
class (tests/grading/untrusted.py, one learner per attack) graded whole, in the sandbox as the user running
the suite and, under root, again as the user ``nobody``. Nothing here asserts a time: a parser that is not
linear shows as a test that never ends (pytest-timeout's guard).
"""

import csv
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from grading import learners, untrusted
from hypothesis import given, settings
from hypothesis import strategies as st
from notebook_runs import ROOT
from test_grading import NOBODY, _grade, _private_folder, _require_sandbox

from course.grade import reports, wire
from course.grade.assignments import load_assignment
from course.grade.discovery import find_learners, select, unanswered
from course.grade.grading import CallOutcome, SubmissionGrade, TaskGrade, _task_grade
from course.grade.judging import ERROR, FAILED, PASSED, TIMEOUT, Verdict
from course.grade.restore import Unreadable, parse_notebook
from course.grade.sandbox import Stage

MIB = 2**20
A01, A06 = learners.A01, untrusted.A06
SPREADSHEET_FORMULA = ("=", "+", "-", "@", "\t", "\r")
HANG_GUARD_S = 1500


@pytest.fixture(scope="module")
def assignments():
    return {name: load_assignment(ROOT / "solutions" / f"{name}.ipynb") for name in (A01, A06)}


def _printable(text: str) -> bool:
    """Text that a terminal shows as it is: no control, escape, format or surrogate character."""
    return all(line.isprintable() for line in text.split("\n"))


# ----------------------------------------------------------------------- 2 and 6: learner text is data

def _graded(assignment, learner: str, reason: str, note: str) -> SubmissionGrade:
    """A grade as grading makes it: tasks that failed with ``reason``, a note, a path named by the learner."""
    tasks = [TaskGrade(task, FAILED, 0, (), reason) for task in assignment.tasks]
    return SubmissionGrade(learner, assignment.name, Path(learner) / f"{learner}.ipynb",
                           assignment.max_points, tasks=tasks, notes=[note], seconds=1.0)


def test_names_and_messages_from_submissions_reach_csv_feedback_and_terminal_as_safe_text(tmp_path,
                                                                                        assignments):
    names = ["jos\udce9", "jos\udce8", "r\udce9sum\udce9", untrusted.ESCAPE_FOLDER, "=1+2*cmd|' -c calc'!A0",
             "@SUM(A1)", "+1", "\u202eevil", "..", "-rf"]
    message = "an image of \udce9 and \ud800 pixels\x1b[2J\r\nforged line"
    grades = [_graded(assignments[A01], name, message, f"cell 3 raised ValueError: {message}")
              for name in names]
    reports.write_csv(grades, tmp_path / "grades.csv")
    reports.write_feedback(grades, tmp_path / "feedback")
    shown = reports.summary(grades, 1.0, 2, [])
    assert _printable(shown)
    with (tmp_path / "grades.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert len({row["learner"] for row in rows}) == len(names)  # distinct names stay distinct
    for row in rows:
        for value in row.values():
            assert _printable(value) and not value.startswith(SPREADSHEET_FORMULA), value
    assert "'=1+2*cmd|' -c calc'!A0" in {row["learner"] for row in rows}
    folders = sorted(path.name for path in (tmp_path / "feedback").iterdir())
    assert len(folders) == len(names) and all(_printable(f) and not f.startswith((".", "-")) for f in folders)
    for path in (tmp_path / "feedback").rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        assert _printable(text) and "\x1b" not in text and "\ufffd" in text


def test_names_become_distinct_safe_file_names():
    from course.grade.text import MAX_NAME_BYTES, file_name

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.text(min_size=1, max_size=300), min_size=2, max_size=2, unique=True))
    def distinct(pair):
        made = [file_name(name) for name in pair]
        assert made[0] != made[1]
        for name in made:
            assert _printable(name) and "/" not in name and not name.startswith((".", "-", "~", " "))
            assert len(name.encode("utf-8")) <= MAX_NAME_BYTES

    distinct()
    assert file_name("josé") == "josé" and file_name("jos\udce9") == "jos%E9"
    assert file_name("100%") == "100%25" and file_name("..") == "%2E."


def test_discovery_walks_a_folder_1000_deep_and_says_what_it_did_not_search(tmp_path, assignments):
    solved = json.dumps(json.loads((ROOT / "solutions" / f"{A01}.ipynb").read_text())).encode()
    untrusted._write(os.fsencode(tmp_path / "deep" / f"{A01}.ipynb"), solved)
    untrusted._deep_folder(os.fsencode(tmp_path / "deep" / "d"), untrusted.DEEP_LEVELS - 1)
    (tmp_path / "nothing" / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "h" / "i").mkdir(parents=True)
    try:
        found = {learner.name: learner for learner in find_learners(tmp_path)[0]}
        deep = select(found["deep"], assignments, MIB)
        nothing = unanswered(found["nothing"], select(found["nothing"], assignments, MIB), [A01])
    finally:
        subprocess.run(["rm", "-rf", str(tmp_path / "deep")], check=True)  # rmtree recurses too
    assert [s.path.name for s in deep.submissions] == [f"{A01}.ipynb"]
    assert any("more than 8 levels deep" in note for note in deep.submissions[0].notes)
    assert "not searched" in nothing[0].reason


# ---------------------------------------------------------------------- 3: parsing cost is the grader's

@pytest.mark.timeout(300)
def test_a_reply_is_checked_in_one_linear_pass():
    for line in (b'"' + b'\\"' * 250_000, b'{"a": "' + b'\\"' * 500_000, b'[' + b'"\\\\", ' * 200_000 + b']'):
        with pytest.raises(wire.WireError):
            wire.loads(line)
    assert wire.loads(b'{"a": "' + b'\\"' * 250_000 + b'"}') == {"a": '"' * 250_000}


def _depth(value) -> int:
    if isinstance(value, (dict, list)):
        return 1 + max(map(_depth, value.values() if isinstance(value, dict) else value), default=0)
    return 0


def _values(value) -> int:
    """Values in a parsed JSON text, keys included."""
    if isinstance(value, dict):
        return 1 + sum(1 + _values(item) for item in value.values())
    return 1 + sum(map(_values, value)) if isinstance(value, list) else 1


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='"\\[]{},: ab\u00e9'),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text('"\\[]{ab'), inner,
                                                                                max_size=4), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(JSON, st.booleans(), st.integers(1, 40))
def test_the_linear_pass_measures_what_json_parses(value, ascii_only, chunk):
    text = json.dumps(value, ensure_ascii=ascii_only).encode()
    saved, wire.SCAN_CHUNK = wire.SCAN_CHUNK, chunk  # strings and escapes that straddle chunks
    try:
        shape = wire.measure(text)
    finally:
        wire.SCAN_CHUNK = saved
    assert shape.depth == _depth(value)
    assert _values(value) <= shape.values <= 2 * _values(value)  # an empty [] or {} counts twice


def test_a_notebook_of_empty_cells_is_refused_before_it_is_built():
    data = untrusted.empty_cells_notebook(31)
    tracemalloc.start()
    try:
        with pytest.raises(Unreadable, match="JSON values"):
            parse_notebook(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * MIB, f"reading a 31 MiB notebook took {peak / MIB:.0f} MiB"


# ------------------------------------------------------------------- 4: one bit per hidden test, no more

def test_a_hidden_failure_reads_alike_whatever_the_learners_code_did(assignments):
    task = next(t for t in assignments[A01].tasks if t.grade_id == "check_grayscale")
    visible, hidden = (next(c for c in task.calls if c.hidden == h) for h in (False, True))
    seen = set()
    for status, message in ((FAILED, "grayscale gives wrong results for seed=23"), (ERROR, "exit status 23"),
                            (TIMEOUT, "stopped after 4.0 s"), (FAILED, "KeyError: 'seed 24'")):
        outcomes = [CallOutcome(visible, Verdict(PASSED, "✓ grayscale"), 1.0),
                    CallOutcome(hidden, Verdict(status, message), 2.0)]
        graded = _task_grade(task, outcomes)
        grade = SubmissionGrade("a", A01, None, 5, tasks=[graded])
        seen.add((graded.status, graded.points, graded.reason, reports.feedback_text(grade)))
    assert len(seen) == 1
    status, points, reason, text = seen.pop()
    assert (status, points, reason) == (FAILED, 0, "hidden tests failed") and "23" not in text


# ------------------------------------------------------- 5: what the learner's own process cannot measure

STRIPPED_PROBE = """
from course.tasks import part06, part07
for function, arguments in ((part06.stable_softmax64, ([1.0],)), (part06.online_vector, (4, 2, 0)),
                            (part07.attention64, ([[1.0]],) * 3), (part07.attention_inputs, (4, 4, 0, 1))):
    try:
        function(*arguments)
        print("callable", function.__name__)
    except RuntimeError as error:
        print("stripped", function.__name__, "belongs to the grader" in str(error))
"""


@pytest.mark.parametrize("learner", [True, False], ids=["learner stage", "runner stage"])
def test_the_learner_worker_gets_no_reference_and_no_inputs_to_rebuild(learner):
    stage = Stage(learner=learner)
    try:
        run = subprocess.run([sys.executable, "-P", "-c", STRIPPED_PROBE], cwd="/", capture_output=True,
                             text=True, env={"PYTHONPATH": str(stage.course), "PATH": os.environ["PATH"]},
                             timeout=300)
    finally:
        stage.remove()
    lines = run.stdout.split("\n")[:-1]
    assert len(lines) == 4, run.stderr[-2000:]
    expected = "stripped" if learner else "callable"
    assert all(line.startswith(expected) and (line.endswith("True") or not learner) for line in lines)


def test_the_grader_serves_each_chunk_and_counts_it_itself(assignments):
    from course.grade import protocol
    from course.grade.serving import Serving

    call = next(c for t in assignments[A06].tasks for c in t.calls if c.function == "check_online_softmax"
                and not c.hidden)
    serving = Serving(call)
    inputs = serving.inputs()["0"]
    case = next(i for i, args in enumerate(inputs) if args["x"]["chunked"]["shape"][0] > 8)
    n, chunk = inputs[case]["x"]["chunked"]["shape"][0], inputs[case]["chunk"]["int"]
    assert set(inputs[case]) == {"x", "chunk"} and "array" not in inputs[case]["x"]  # x is not sent
    read = {"type": "read", "step": 0, "case": case, "input": "x", "start": 0, "stop": chunk}
    for forged in ({"stop": chunk + 1}, {"start": n, "stop": n + 1}, {"input": "chunk"}, {"step": 1},
                   {"case": 10**6}, {"start": -1}, {"stop": True}):
        with pytest.raises(wire.WireError):
            protocol.answer_or_read(read | forged, call, serving)
    data = np.concatenate([wire.decode_array(serving.serve(protocol.answer_or_read(
        read | {"start": start, "stop": min(n, start + chunk)}, call, serving))["data"])
        for start in range(0, n, chunk)])
    step = call.steps[0]
    assert np.array_equal(data, step.task.make_args(step.task.cases[case])["x"])
    results = serving.with_reads(0, [{"reads": {"x": [n, n]}} for _ in step.task.cases])  # a claim, replaced
    assert results[case]["reads"] == {"x": [min(chunk, n - s) for s in range(0, n, chunk)]}
    assert results[case - 1 if case else case + 1]["reads"] == {"x": []}
    assert "which is x once at most" in step.task.reads_rule(step.task.cases[case], results[case]["reads"])


# ------------------------------------------------------------------------------------- the class, whole

def _expected_rows(run_rows: list[dict]) -> dict[tuple[str, str], tuple]:
    got: dict[tuple[str, str], list[dict]] = {}
    for row in run_rows:
        got.setdefault((row["learner"], row["assignment"]), []).append(row)
    return {key: (sum(float(row["points"]) for row in rows), tuple(row["status"] for row in rows))
            for key, rows in got.items()}


def _check_untrusted_run(run, out: Path) -> None:
    assert run.returncode == 0, run.stdout[-3000:]
    assert run.survivors == [], run.survivors
    assert run.peak_kib < 300 * 2**10, f"the grader held {run.peak_kib} KiB"  # 31 MiB of cells: over 1 GiB
    expected = {(learner, assignment): grade for learner, by_assignment in untrusted.EXPECTED.items()
                for assignment, grade in by_assignment.items()}
    assert _expected_rows(run.rows()) == expected, run.stdout[-3000:]
    for row in run.rows():
        for value in row.values():
            assert _printable(value) and (value == "-" or not value.startswith(SPREADSHEET_FORMULA)), row
    assert "'=1+2*cmd|' -c calc'!A0" in {row["assignment"] for row in run.rows()}
    assert "\x1b" not in run.stdout and "\nforged" not in run.stdout
    assert "more than 8 levels deep" in run.stdout
    rows = {(row["learner"], row["task"]): row for row in run.rows()}
    assert "\ufffd" in rows[("surrogate", "check_grayscale")]["reason"]
    covert = [[(row["task"], row["status"], row["reason"]) for row in run.rows()
               if row["learner"] == f"covert_{kind}"] for kind in untrusted.COVERT]
    assert all(rows == covert[0] for rows in covert)  # a value, an error, a timeout, a crash: one bit
    feedback = {kind: (out / "feedback" / f"covert_{kind}" / f"{A01}.md").read_text()
                for kind in untrusted.COVERT}
    feedback = {kind: text.replace(f"covert_{kind}", "covert") for kind, text in feedback.items()}
    assert len(set(feedback.values())) == 1, feedback
    assert "Of hidden tests you learn only whether" in feedback["value"]
    resume = (out / "feedback" / "resume" / f"{A01}.md").read_text(encoding="utf-8")
    assert "`r\ufffdsum\ufffd.ipynb`, was graded" in resume
    assert "the grader ran the notebook again without it" in (out / "feedback" / "quadratic" /
                                                              f"{A01}.md").read_text()
    thread = (out / "feedback" / "online_by_thread" / f"{A06}.md").read_text()
    assert "raised an exception, KeyError" in thread  # the reference raised in its thread: no answer


def _untrusted_class(folder: Path) -> None:
    untrusted.write_untrusted_class(folder, 31)


@pytest.mark.timeout(HANG_GUARD_S)
def test_the_untrusted_class_gets_exactly_the_expected_grades():
    _require_sandbox()
    base = _private_folder("gpusim-grade-untrusted-")
    try:
        _untrusted_class(base / "class")
        run = _grade(base / "class", base / "graded", "--sandbox", "bwrap", "--timeout", "30",
                     "--max-notebook-mb", "32")
        _check_untrusted_run(run, base / "graded")
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=True)


@pytest.mark.timeout(HANG_GUARD_S)
def test_an_ordinary_user_grades_the_untrusted_class_alike():
    if os.geteuid() != 0:
        pytest.skip("the suite runs as an ordinary user already: the other class run is this test")
    _require_sandbox()
    base = _private_folder("gpusim-grade-untrusted-nobody-", NOBODY)
    try:
        _untrusted_class(base / "class")
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(base)], check=True)
        run = _grade(base / "class", base / "graded", "--sandbox", "bwrap", "--timeout", "30",
                     "--max-notebook-mb", "32", as_nobody=True)
        _check_untrusted_run(run, base / "graded")
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=True)
