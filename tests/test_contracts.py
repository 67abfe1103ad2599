"""Checks derived from contracts (course.tasks.contract): the cases a contract draws, the limits its method
takes from the reference solution's profile, shrinking, hints in steps, and the tables of profiles. The pilot
contracts are those of Parts 1 and 5, then Parts 2 to 4, 6 and 7, 8 and 9; their notebooks and wrong
solutions are covered by test_exercises.py."""

import os
import subprocess
import sys
import textwrap
from dataclasses import replace

os.environ.setdefault("COURSE_MODE", "cpu")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import utils  # noqa: E402  (picks the simulator before numba is imported)
from course.grade.recording import planned_steps  # noqa: E402
from course.tasks import (  # noqa: E402
    common,
    contract,
    part01,
    part02,
    part03,
    part04,
    part05,
    part06,
    part07,
    part08,
    part09,
    profiles,
    references,
)
from course.tasks.contract import COUNTERS, Budgeted, Unbudgeted  # noqa: E402

cuda = utils.cuda
ROOT = common.REPOSITORY
PARTS = (part01, part02, part03, part04, part05, part06, part07, part08, part09)
CONTRACT_TASKS = [task for part in PARTS for task in part.TASKS if task.contract is not None]
IDS = [task.contract.name for task in CONTRACT_TASKS]


# ----------------------------------------------------------------------------------------------- the cases

@pytest.mark.parametrize("task", CONTRACT_TASKS, ids=IDS)
def test_cases_are_the_explicit_examples_then_drawn_ones_inside_the_domain(task):
    spec = task.contract
    cases = list(task.cases)
    explicit = spec.explicit_cases(task.cases.seeds, hidden=False)
    assert cases[:len(explicit)] == explicit and len(explicit) == len(spec.examples)
    drawn = cases[len(explicit):]
    assert len(drawn) == spec.drawn
    assert all(spec.in_domain(case.params) for case in cases)
    assert len({(case.sizes, case.inputs) for case in cases}) == len(cases), "no case twice"
    assert {case.inputs for case in cases} <= {family.name for family in spec.inputs}


@pytest.mark.parametrize("task", CONTRACT_TASKS, ids=IDS)
def test_hidden_tests_run_the_hidden_examples_and_draw_other_cases(task):
    hidden = task.with_seeds((101, 102, 103))
    visible_drawn = {(c.sizes, c.inputs) for c in list(task.cases)[len(task.contract.examples):]}
    hidden_drawn = {(c.sizes, c.inputs) for c in list(hidden.cases)[-task.contract.drawn:]}
    assert hidden_drawn != visible_drawn
    hidden_sizes = {c.sizes for c in hidden.cases}
    explicit = task.contract.explicit_cases((101, 102, 103), hidden=True)
    assert {c.sizes for c in explicit} <= hidden_sizes
    assert len(explicit) == len(task.contract.hidden_examples)
    assert {c.seed for c in hidden.cases} == {101, 102, 103}
    assert list(task.with_seeds((101, 102, 103)).cases) == list(hidden.cases), "same seeds, same cases"


def test_drawn_cases_cover_every_family_the_extremes_and_block_sizes_off_the_warp():
    everything = [case for task in CONTRACT_TASKS for seeds in ((0, 1, 2), (7, 8, 9), (17, 18, 19))
                  for case in task.with_seeds(seeds).cases]
    assert {case.inputs for case in everything} >= {"wide", "equal", "zero_lines", "signed", "opposite",
                                                     "negative", "one_bin", "ends", "extremes"}
    for task in (part01.VECTOR_ADD, part03.HISTOGRAM, part04.ADD_BIAS, part04.SIGMOID3_BACKWARD):
        threads = [case.params["threads"] for case in task.cases]
        assert any(t % 32 for t in threads), "a block size that is not a whole number of warps"
    warps = [case.params["threads"] for seeds in ((7, 8, 9), (17, 18, 19)) for case in
             part03.WARP_SUM.with_seeds(seeds).cases]
    assert all(t % 32 == 0 for t in warps) and len(set(warps)) >= 4, "whole warps, several of them"
    dot_threads = {case.params["threads"] for case in part03.DOT.with_seeds((7, 8, 9)).cases}
    assert dot_threads <= set(part03.POWERS_OF_TWO) and len(dot_threads) >= 4
    for task in (part02.BLOCK_SUM, part03.DOT, part04.ADD_BIAS, part04.SIGMOID3_BACKWARD):
        size = task.contract.sizes[0]
        assert size.top({}) > max(example[size.name] for example in task.contract.examples), \
            f"{task.name}: a size past the largest hand-picked one"
    widths = [case.params["t"] for case in part05.TILED_MATMUL_DYNAMIC.cases]
    assert any(t not in part05.WIDTHS for t in widths)
    largest_k = max(case.params["k"] for case in part05.TILED_MATMUL.cases)
    assert largest_k > max(k for _, k, _ in part05.SIZES), "K past the largest hand-picked one"


LOCAL_CONSTANTS = """
import sys
sys.path.insert(0, {root!r})
{imports}
import importlib
for name in {parts!r}:
    for task in importlib.import_module(name).TASKS:
        if task.contract is not None:
            print(task.contract.name, [case.label() for case in task.with_seeds((71, 72)).cases])
"""


def test_the_draw_is_the_same_in_every_process_whatever_it_imported(tmp_path):
    """Hypothesis would otherwise mix constants from the modules a process imported into its draws."""
    module = tmp_path / "learner_module.py"
    module.write_text("SIZES = (1, 2, 3, 7, 8, 9, 13, 16, 17, 31, 33, 48, 63, 64, 65, 127, 129, 1023)\n"
                      "NAMES = ('uniform', 'wide', 'equal', 'signed')\n")
    outputs = []
    for imports in ("", f"sys.path.insert(0, {str(tmp_path)!r})\nimport learner_module, gpusim.viz, "
                        f"course.grade.grading"):
        script = LOCAL_CONSTANTS.format(root=str(ROOT), imports=imports,
                                        parts=[part.__name__ for part in PARTS])
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                                cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    here = {task.contract.name: [c.label() for c in task.with_seeds((71, 72)).cases]
            for task in CONTRACT_TASKS}
    assert outputs[0] == "".join(f"{name} {labels}\n" for name, labels in here.items())
    assert not (tmp_path / ".hypothesis").exists(), "no Hypothesis folder where a notebook runs"


def test_the_grader_lists_the_cases_the_check_cell_runs():
    steps = planned_steps(part05, "check_tiled_matmul_dynamic", 1, {"seeds": (81, 82, 83)})
    assert list(steps[0].task.cases) == list(part05.TILED_MATMUL_DYNAMIC.with_seeds((81, 82, 83)).cases)
    factory = planned_steps(part05, "check_make_tiled_matmul", 1, {"seeds": (91, 92, 93)})
    tasks = part05.factory_tasks((91, 92, 93))
    assert [step.task.name for step in factory] == [task.name for task in tasks]
    assert [list(step.task.cases) for step in factory] == [list(task.cases) for task in tasks]


def test_simpler_cases_stay_in_the_domain_and_keep_family_and_seed():
    case = common.Case((("m", 5), ("k", 40), ("n", 9), ("block_x", 12), ("block_y", 5)), 2, "wide")
    spec = part01.MATMUL_CONTRACT
    simpler = spec.simpler(case)
    assert simpler and all(c.inputs == "wide" and c.seed == 2 for c in simpler)
    assert all(spec.in_domain(c.params) and spec.cost(c.params) <= spec.cost(case.params) for c in simpler)
    assert all(sum(c.params.values()) < sum(case.params.values()) for c in simpler)
    sizes = [np.prod(list(c.params.values())) for c in simpler]
    assert sizes == sorted(sizes), "smallest first"
    assert {"m": 1, "k": 40, "n": 9, "block_x": 12, "block_y": 5} in [c.params for c in simpler]


def test_a_size_with_choices_draws_shrinks_and_checks_only_those():
    spec = part03.WARP_SUM_CONTRACT
    assert spec.in_domain({"n": 5, "threads": 64}) and not spec.in_domain({"n": 5, "threads": 48})
    drawn = [case.params["threads"] for seeds in ((1,), (2,), (3,)) for case in spec.cases(seeds)]
    assert set(drawn) <= set(part03.WHOLE_WARPS)
    case = common.Case((("n", 40), ("threads", 160)), 1, "wide")
    simpler = [c.params["threads"] for c in spec.simpler(case) if c.params["n"] == 40]
    assert simpler and set(simpler) <= {32, 96, 128}, "each proposal snapped down to whole warps"
    with pytest.raises(ValueError, match="outside the domain"):
        replace(part03.DOT_CONTRACT, examples=({"n": 5, "threads": 48},))


def test_a_contract_must_say_something_of_every_counter():
    with pytest.raises(ValueError, match="every counter"):
        replace(part01.VECTOR_ADD_CONTRACT, method=part01.VECTOR_ADD_CONTRACT.method[1:])
    with pytest.raises(ValueError, match="repeated"):
        contract.method([Budgeted("global_loads"), Budgeted("global_loads")])
    with pytest.raises(ValueError, match="outside the domain"):
        replace(part01.VECTOR_ADD_CONTRACT, examples=({"n": 5, "threads": 2048},))


@pytest.mark.parametrize("task", CONTRACT_TASKS, ids=IDS)
def test_every_counter_is_budgeted_or_says_why_not(task):
    entries = {entry.counter: entry for entry in task.contract.method}
    assert sorted(entries) == sorted(COUNTERS)
    for entry in entries.values():
        if isinstance(entry, Unbudgeted):
            assert len(entry.why) > 10 and "\n" not in entry.why
    if not task.contract.measured:  # no gpusim kernel: its reads, state or a further check judged instead
        assert all(isinstance(e, Unbudgeted) for e in entries.values())
        assert task.reads_rule is not None or not task.chunked
        return
    shared = entries["static_shared_bytes"]
    assert isinstance(shared, Budgeted) and shared.least is not None, "shared memory bounded on both sides"
    assert isinstance(entries["global_sectors"], Budgeted) and isinstance(entries["bank_conflicts"], Budgeted)


def test_a_plain_python_contract_judges_its_reads_and_needs_no_reference_profile(monkeypatch):
    def no_profile(task, case):
        raise AssertionError("a plain-Python task has no kernel to profile")

    monkeypatch.setattr(profiles, "profile", no_profile)
    task = part06.ONLINE_SOFTMAX
    case = task.cases[3]
    args = task.make_args(case)
    result = {"outputs": task.reference(case, args), "report": {}, "launches": [], "error": None}
    n = case.params["n"]
    assert common.verdict(task, case, {**result, "reads": {"x": [n, n]}}) is None
    failure = common.verdict(task, case, {**result, "reads": {"x": [n]}})
    assert failure.kind == "reads" and "once at most" in failure.message
    assert not task.contract.measured and part05.TILED_MATMUL.contract.measured


# --------------------------------------------------------------------------------------- profiles, limits

def test_a_profile_is_measured_under_the_default_schedule_only(monkeypatch):
    def no_other_schedules(*args):
        raise AssertionError("the reference's counters need no other schedule")

    monkeypatch.setattr(common, "run_under_schedules", no_other_schedules)
    task = part08.RING_ROW_MAX
    case = next(case for case in task.cases if task.schedules(case))
    assert profiles.measure(task, case) == profiles.stored(task, case)


def test_the_tables_of_profiles_are_what_the_reference_solutions_measure():
    result = subprocess.run([sys.executable, "tools/make_profiles.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("task", [part05.TILED_MATMUL, part05.TILED_MATMUL_DYNAMIC, part05.factory_task(8)],
                         ids=lambda t: t.name)
def test_the_lessons_formulas_are_the_reference_solutions_figures(task):
    for case in task.cases:
        p, profile = case.params, profiles.profile(task, case)
        t = p.get("t", 8 if task.name == "make_tiled_matmul(8)" else part05.TILE)
        assert profile["global_loads"] == part05.tiled_read_budget(p["m"], p["k"], p["n"], t), case.label()
        assert profile["max_thread_accesses"] == part05.thread_access_budget(p["k"], t), case.label()
        assert profile["max_block_barriers"] == 2 * -(-p["k"] // t) and profile["bank_conflicts"] == 0


@pytest.mark.parametrize("task, sectors", [
    (part01.VECTOR_ADD, part01._vector_add_sectors),
    (part01.GRAYSCALE_KERNEL, lambda p: part01._grayscale_sectors(p, (p["block_x"], p["block_y"]))),
    (part01.GRAYSCALE, lambda p: part01._grayscale_sectors(p, (part01.TILE, part01.TILE))),
    (part01.MATMUL, part01._matmul_sectors),
    (part04.ADD_BIAS, part04._bias_sector_budget),
    (part04.TRANSPOSE, part04.transpose_sector_budget),
], ids=["vector_add", "grayscale_kernel", "grayscale", "matmul", "add_bias", "transpose"])
def test_the_intended_sectors_are_the_reference_solutions(task, sectors):
    for case in task.cases:
        assert profiles.profile(task, case)["global_sectors"] == sectors(case.params), case.label()


def _right_values(task, case, report):
    args = task.make_args(case)
    expected = task.reference(case, args)
    outputs = {o.name: np.asarray(expected[o.name]).astype(args[o.name].dtype) for o in task.outputs}
    return {"outputs": outputs, "report": report, "launches": [[[1, 1, 1], [16, 16, 1], 0]], "error": None}


def test_a_limit_message_names_the_counter_both_figures_and_what_the_task_asks():
    task, case = part05.TILED_MATMUL, part05.TILED_MATMUL.cases[0]
    reference = profiles.profile(task, case)
    assert common.judge(task, case, _right_values(task, case, dict(reference))) is None
    report = {**reference, "global_sectors": 4 * reference["global_sectors"], "bank_conflicts": 960}
    message = common.judge(task, case, _right_values(task, case, report))
    sectors = reference["global_sectors"]
    assert f"it used {4 * sectors} sector transfers of global memory" in message
    assert f"the budget is {sectors + sectors // 4 + 2}: the reference solution's figure + 25% + 2" in message
    assert f"(`global_sectors`, {sectors} here)" in message
    assert "The task asks for coalesced tile loads" in message
    assert "What it looks like: the tile loads move 4.0× the reference's 32-byte sectors" in message
    assert "960 more bank conflicts" in message and "Hint: Thread (ty, tx) reads" in message
    assert "tasks.hint('tiled_matmul', 2)" in message


@pytest.mark.parametrize("bytes_, words", [
    (4096, "the budget is 2176: the reference solution's figure + one padding column per tile"),
    (1024, "the task asks for at least 2048"),
])
def test_shared_memory_is_bounded_on_both_sides(bytes_, words):
    task, case = part05.TILED_MATMUL, part05.TILED_MATMUL.cases[0]
    report = {**profiles.profile(task, case), "static_shared_bytes": bytes_}
    message = common.judge(task, case, _right_values(task, case, report))
    assert words in message and "bytes of static shared memory per block" in message


def test_without_the_reference_solution_the_check_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(references, "SOLUTIONS", tmp_path)
    references._namespace.cache_clear()
    monkeypatch.setattr(profiles, "_live", {})
    task = part01.VECTOR_ADD
    case = common.Case((("n", 77), ("threads", 19)), 5, "wide")  # in no table
    try:
        message = common.judge(task, case, _right_values(task, case, {}))
    finally:
        references._namespace.cache_clear()
    assert "cannot measure its method here: solutions/01_kernels_in_python.ipynb" in message
    assert "git checkout solutions/" in message


def test_the_reference_is_the_solution_notebooks_cell_and_is_not_an_answer():
    kernel = references.load(part05.TILED_MATMUL.contract.solution)["kernel"]
    assert kernel.py_func.__code__.co_filename.endswith("05_tiled_matmul.ipynb#cell4")
    with pytest.raises(common.CourseCodeError, match="the course's own code"):
        part05.check_tiled_matmul(kernel)


# ----------------------------------------------------------------------------------------------- shrinking

@cuda.jit
def wrong_from_40(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i] if out.size < 40 else a[i] - b[i]


def test_a_failing_case_is_shrunk_and_the_message_says_where_it_started():
    task = replace(part01.VECTOR_ADD, cases=(common.Case((("n", 900), ("threads", 77)), 1, "uniform"),))
    with pytest.raises(common.CheckFailed) as failed:
        common.check(task, {"kernel": wrong_from_40})
    message = str(failed.value)
    shrunk = int(message.split("wrong results for n=", 1)[1].split(",", 1)[0])
    assert 40 <= shrunk < 100, "a bounded search gets close to the smallest failing n, 40"
    assert "It first failed on n=900, threads=77, seed=1, inputs=uniform" in message
    assert "What it looks like: out holds a[i] - b[i], not a[i] + b[i]." in message


def test_shrinking_stops_after_its_runs(monkeypatch):
    monkeypatch.setattr(common, "SHRINK_RUNS", 2)
    task = replace(part01.VECTOR_ADD, cases=(common.Case((("n", 900), ("threads", 77)), 1, "uniform"),))
    with pytest.raises(common.CheckFailed, match=r"of the 2 smaller cases the check then tried"):
        common.check(task, {"kernel": wrong_from_40})


# ---------------------------------------------------------------------------------------------------- hints

def test_hints_come_in_steps(capsys):
    part05.hint("tiled_matmul", 2)
    second = capsys.readouterr().out
    assert second.startswith("tiled_matmul, hint 2 of 3 (more: tasks.hint('tiled_matmul', 3))")
    assert "sA[ty, tx]" in second and "sA[ty, tx]" not in part05.TILED_MATMUL.hint
    part05.hint("make_tiled_matmul", 9)
    assert "hint 3 of 3" in capsys.readouterr().out
    part01.hint("matmul")
    assert "float32(0.0)" in capsys.readouterr().out
    part01.hint("vectoradd")
    assert "the tasks are: vector_add, grayscale, matmul" in capsys.readouterr().out


def test_the_exercise_texts_mention_hints_and_contracts():
    for notebook, name in (("01_kernels_in_python", "vector_add"), ("05_tiled_matmul", "tiled_matmul"),
                           ("06_softmax", "online_softmax"), ("07_flash_attention", "flash_attention")):
        text = (ROOT / "exercises" / f"{notebook}.ipynb").read_text()
        assert f'tasks.hint(\\"{name}\\", 2)' in text and "contract" in text and "float32(0.0)" in text


def test_a_diagnosis_names_a_tile_loop_that_stops_early():
    task = part05.TILED_MATMUL
    case = common.Case((("m", 9), ("k", 45), ("n", 7)), 1, "uniform")
    args = task.make_args(case)
    early = args["a"][:, :32].astype(np.float64) @ args["b"][:32]
    result = {"outputs": {"c": early.astype(np.float32)}, "report": {}, "error": None,
              "launches": [[[1, 1, 1], [16, 16, 1], 0]]}
    message = common.judge(task, case, result)
    assert "c holds the sums over the first 32 of the K = 45 terms" in message
    assert "stopped after 2 of its cdiv(K, T) = 3 steps" in message


def test_the_pilot_notebooks_import_hypothesis_only_when_cases_are_needed():
    code = textwrap.dedent("""
        import sys
        from course.tasks import part01, part05
        print('hypothesis' in sys.modules)
        part05.TILED_MATMUL.cases[0]
        print('hypothesis' in sys.modules)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.split() == ["False", "True"], result.stderr
