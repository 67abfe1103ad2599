"""Generate exercises/NN_*.ipynb from the single source in solutions/, with nbgrader's own preprocessors.

    python tools/make_exercises.py           # write exercises/
    python tools/make_exercises.py --check   # fail, naming the files, if exercises/ is stale

The preprocessors and their order are those of ``nbgrader generate_assignment``, less the two that need an
nbgrader course (the gradebook database and header/footer files): solutions and hidden tests are cleared,
outputs removed, grade and read-only cells locked, and checksums recorded so edited locked cells can be found.
"""

import argparse
import sys
from pathlib import Path

import nbformat
from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearMarkScheme,
    ClearOutput,
    ClearSolutions,
    ComputeChecksums,
    LockCells,
)

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
PIPELINE = (
    LockCells, ClearSolutions, ClearOutput, CheckCellMetadata, ComputeChecksums,
    ClearHiddenTests, ClearMarkScheme, ComputeChecksums, CheckCellMetadata,
)


def exercise_text(solution: Path) -> str:
    """The exercise notebook, as JSON text, that nbgrader's preprocessors make from one solution notebook."""
    notebook = nbformat.read(solution, as_version=4)
    resources = {}
    for preprocessor in PIPELINE:
        notebook, resources = preprocessor().preprocess(notebook, resources)
    notebook.metadata.pop("widgets", None)
    return nbformat.writes(notebook) + "\n"


def stale_exercises() -> list[str]:
    """Names of exercise files that are missing, differ from their source, or have no source any more."""
    expected = {s.name: exercise_text(s) for s in sorted(SOLUTIONS.glob("*.ipynb"))}
    present = {e.name for e in EXERCISES.glob("*.ipynb")}
    stale = [name for name, text in expected.items()
             if name not in present or (EXERCISES / name).read_text() != text]
    return stale + sorted(f"{name} (no source in solutions/)" for name in present - expected.keys())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check that exercises/ is up to date")
    args = parser.parse_args()
    if args.check:
        stale = stale_exercises()
        for name in stale:
            print(f"exercises/{name} is not what solutions/ generates: run `make exercises`.",
                  file=sys.stderr)
        return 1 if stale else 0
    EXERCISES.mkdir(exist_ok=True)
    sources = sorted(SOLUTIONS.glob("*.ipynb"))
    for orphan in {e.name for e in EXERCISES.glob("*.ipynb")} - {s.name for s in sources}:
        (EXERCISES / orphan).unlink()
        print(f"removed exercises/{orphan} (no source in solutions/)")
    for solution in sources:
        (EXERCISES / solution.name).write_text(exercise_text(solution))
        print(f"exercises/{solution.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
