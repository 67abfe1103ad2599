"""Every solution notebook runs top to bottom in CPU mode, each cell within a time limit (the lessons run in
tests/test_lessons.py, once each, and every notebook is committed without outputs)."""

import nbformat
import pytest
from notebook_runs import ROOT, run_notebook

SOLUTIONS = sorted(ROOT.glob("solutions/*.ipynb"))
NOTEBOOKS = sorted(ROOT.glob("notebooks/*.ipynb")) + SOLUTIONS


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_runs_clean(path, record_property):
    record_property("notebook_seconds", run_notebook(path))


@pytest.mark.parametrize("path", NOTEBOOKS + sorted(ROOT.glob("exercises/*.ipynb")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    with_outputs = [i + 1 for i, cell in enumerate(notebook.cells)
                    if cell.cell_type == "code" and (cell.outputs or cell.execution_count)]
    assert not with_outputs, f"{path.name}: cells {with_outputs} have outputs; clear them before committing."
