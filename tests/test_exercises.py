"""The exercises: generated from solutions/, failing while unsolved, and failing on known-wrong solutions.

A known-wrong solution is a file tests/wrong_solutions/<solution notebook stem>/<name>.py defining
REPLACES (the grade_id of the solution cell it stands in for), SOURCE (its code), FAILS (each check cell
that must fail, mapped to a text its message must contain) and FAMILY (the kind of mistake, one of
FAMILIES). Every other check cell must still pass.
"""

import runpy
import subprocess
import sys

import pytest
from notebook_runs import ROOT, code_cells, run_cells_in_process

EXERCISES = sorted(ROOT.glob("exercises/*.ipynb"))
FAMILIES = {
    "inputs": "right on tame inputs only: a max taken too early, no overflow guard, a lucky constant",
    "shapes": "a loop bound, guard or size that only tame shapes hide: K vs M, a hard-coded size or block",
    "method": "right values by the wrong technique: serial work, no shared memory, no privatisation, O(n²)",
    "memory": "a memory promise broken: an N×N buffer, a module-level array, memory that grows too fast",
    "compiler": "a kernel a GPU would refuse: a list, an import, a returned value, a write to a module array",
    "sync": "a missing, misplaced or divergent barrier, shuffle or atomic: a race or a hang",
    "index": "a wrong index, guard or launch: elements missed, written twice or out of bounds",
}
FAMILIES_EVERYWHERE = ("inputs", "shapes", "method", "compiler")  # at least 3 fixtures per notebook each
MIN_PER_FAMILY = 3
WRONG_SOLUTIONS = sorted(ROOT.glob("tests/wrong_solutions/*/*.py"))


def test_exercises_are_generated_from_solutions():
    result = subprocess.run([sys.executable, "tools/make_exercises.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_every_solution_has_an_exercise_and_checks():
    solutions = sorted(ROOT.glob("solutions/*.ipynb"))
    assert solutions, "solutions/ holds no notebooks"
    for path in solutions:
        graded = [c for c in code_cells(path) if c["graded"]]
        assert len(graded) >= 3, f"{path.name} has {len(graded)} graded check cells; the course wants 3 to 6."
        assert (ROOT / "exercises" / path.name).exists()


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.name)
def test_unsolved_exercise_fails_every_check(path):
    outcomes = run_cells_in_process(path)
    graded = [c["grade_id"] for c in code_cells(path) if c["graded"]]
    passing = [grade_id for grade_id in graded if outcomes[grade_id] is None]
    assert not passing, f"{path.name}: check cells {passing} pass although the exercise is unsolved."


@pytest.mark.parametrize("fixture", WRONG_SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_wrong_solution_fails_exactly_its_checks(fixture):
    spec = runpy.run_path(str(fixture))
    solution = ROOT / "solutions" / f"{fixture.parent.name}.ipynb"
    cells = code_cells(solution)
    assert spec["REPLACES"] in {c["grade_id"] for c in cells}, f"{fixture.name}: no cell {spec['REPLACES']}"
    outcomes = run_cells_in_process(solution, {spec["REPLACES"]: spec["SOURCE"]})
    graded = [c["grade_id"] for c in cells if c["graded"]]
    for grade_id in graded:
        error = outcomes[grade_id]
        if grade_id in spec["FAILS"]:
            assert error is not None, f"{fixture.name}: {grade_id} passed, but this solution is wrong."
            assert spec["FAILS"][grade_id] in f"{type(error).__name__}: {error}", (
                f"{fixture.name}: {grade_id} failed without saying {spec['FAILS'][grade_id]!r}:\n{error}")
        else:
            assert error is None, f"{fixture.name}: {grade_id} should pass but raised:\n{error!r}"
    replaced_error = outcomes.get(spec["REPLACES"])
    assert replaced_error is None, f"{fixture.name}: the replaced cell itself raised {replaced_error!r}"


@pytest.mark.parametrize("solution", sorted(ROOT.glob("solutions/*.ipynb")), ids=lambda p: p.stem)
def test_every_family_of_mistakes_has_fixtures(solution):
    folder = ROOT / "tests" / "wrong_solutions" / solution.stem
    fixtures = {f.name: runpy.run_path(str(f)) for f in folder.glob("*.py")}
    unknown = {name: spec.get("FAMILY") for name, spec in fixtures.items()
               if spec.get("FAMILY") not in FAMILIES}
    assert not unknown, f"fixtures without a known FAMILY (one of {sorted(FAMILIES)}): {unknown}"
    needed = FAMILIES_EVERYWHERE + (("memory",) if solution.stem.startswith("07") else ())
    for family in needed:
        count = sum(spec["FAMILY"] == family for spec in fixtures.values())
        assert count >= MIN_PER_FAMILY, f"{solution.stem}: {count} '{family}' fixtures ({FAMILIES[family]})"


def test_every_graded_task_has_two_wrong_solutions():
    for solution in sorted(ROOT.glob("solutions/*.ipynb")):
        fixtures = [runpy.run_path(str(f)) for f in ROOT.glob(f"tests/wrong_solutions/{solution.stem}/*.py")]
        for cell in code_cells(solution):
            if cell["graded"]:
                count = sum(cell["grade_id"] in f["FAILS"] for f in fixtures)
                assert count >= 2, f"{solution.name}: {cell['grade_id']} has {count} wrong-solution fixtures"
