"""Write the fixture class of :mod:`learners` as notebooks: ``<folder>/<learner>/<assignment>.ipynb``.

    cd tests && ../.venv/bin/python -m grading.fake_class /tmp/class
    make grade SUBMISSIONS=/tmp/class
"""

import copy
import json
import runpy
import sys
from pathlib import Path

from . import learners

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
exercise_text = runpy.run_path(str(ROOT / "tools" / "make_exercises.py"))["exercise_text"]


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _solved(assignment: str) -> dict:
    """The released exercise (as nbgrader makes it) with the reference solution typed into every stub."""
    released = json.loads(exercise_text(SOLUTIONS / f"{assignment}.ipynb"))
    solution = json.loads((SOLUTIONS / f"{assignment}.ipynb").read_text())
    answers = {_nbgrader(cell).get("grade_id"): cell["source"] for cell in solution["cells"]
               if _nbgrader(cell).get("solution")}
    for cell in released["cells"]:
        if _nbgrader(cell).get("grade_id") in answers:
            cell["source"] = answers[_nbgrader(cell)["grade_id"]]
    return released


def released_stub(assignment: str, grade_id: str) -> str:
    """A solution cell as handed out, before the learner types anything."""
    released = json.loads(exercise_text(SOLUTIONS / f"{assignment}.ipynb"))
    return next("".join(cell["source"]) for cell in released["cells"]
                if _nbgrader(cell).get("grade_id") == grade_id)


def _learner_notebook(assignment: str, replacements: dict) -> dict:
    """The solved notebook with cells replaced by grade_id (None deletes one, UNSOLVED restores the stub) and
    new code cells inserted after a cell, under the key ``("after", grade_id)``."""
    released = json.loads(exercise_text(SOLUTIONS / f"{assignment}.ipynb"))
    stubs = {_nbgrader(cell).get("grade_id"): cell["source"] for cell in released["cells"]}
    notebook = copy.deepcopy(_solved(assignment))
    kept = []
    for cell in notebook["cells"]:
        grade_id = _nbgrader(cell).get("grade_id")
        if grade_id in replacements:
            new = replacements[grade_id]
            if new is None:
                continue
            cell["source"] = stubs[grade_id] if new == learners.UNSOLVED else new.lstrip("\n")
        kept.append(cell)
        for source in replacements.get(("after", grade_id), ()) if grade_id else ():
            kept.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                         "source": source.lstrip("\n")})
    notebook["cells"] = kept
    return notebook


def _special(kind: str) -> str:
    if kind == "truncated":
        text = json.dumps(_solved(learners.A01), indent=1)
        return text[: len(text) // 2]
    if kind == "no cells":
        notebook = _solved(learners.A02)
        notebook["cells"] = []
        return json.dumps(notebook, indent=1)
    other = kind.removeprefix("copy of ")
    return json.dumps(_solved(other), indent=1)


def write_class(folder: Path, snoop_path: Path) -> None:
    """Every fake learner's notebooks under ``folder``; the cheater tries to read ``snoop_path``."""
    for learner, notebooks in learners.cells(str(snoop_path)).items():
        for assignment, replacements in notebooks.items():
            path = folder / learner / f"{assignment}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(_learner_notebook(assignment, replacements), indent=1))
    for learner, notebooks in learners.SPECIAL.items():
        for assignment, kind in notebooks.items():
            path = folder / learner / f"{assignment}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_special(kind))
        for assignment in learners.SPECIAL_CORRECT.get(learner, ()):
            (folder / learner / f"{assignment}.ipynb").write_text(json.dumps(_solved(assignment), indent=1))


if __name__ == "__main__":
    write_class(Path(sys.argv[1]), SOLUTIONS / f"{learners.A01}.ipynb")
