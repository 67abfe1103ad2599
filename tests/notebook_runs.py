"""Run notebooks for the tests: whole notebooks through nbclient, or their cells in-process for speed."""

import linecache
import os
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

ROOT = Path(__file__).resolve().parent.parent
CELL_TIMEOUT_S = 180


class NotebookFailed(AssertionError):
    """A notebook cell failed: names the notebook, the cell and what happened."""


def _describe(notebook, index: int) -> str:
    source = notebook.cells[index].source.strip().splitlines()
    return f"cell {index + 1}" + (f" (`{source[0][:70]}`)" if source else "")


def run_notebook(path: Path) -> float:
    """Run a notebook top to bottom in CPU mode and return its seconds; a failing, stuck or dead cell raises
    NotebookFailed naming the notebook and the cell."""
    return execute_notebook(path)[1]


def execute_notebook(path: Path):
    """Run a notebook top to bottom in CPU mode; return the executed notebook (with its outputs) and its
    seconds. A failing, stuck or dead cell raises NotebookFailed naming the notebook and the cell."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    # As a learner starts it: only COURSE_MODE set, so a notebook that imports numba before utils fails here.
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    env.update(COURSE_MODE="cpu", MPLBACKEND="Agg", PYDEVD_DISABLE_FILE_VALIDATION="1")
    name = str(path.relative_to(ROOT))
    start = time.perf_counter()
    index = 0
    try:
        with client.setup_kernel(env=env):
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
        kind = {CellTimeoutError: f"ran over {CELL_TIMEOUT_S} s", DeadKernelError: "killed the kernel"}.get(
            type(error), "raised")
        raise NotebookFailed(f"{name}, {_describe(notebook, index)}, {kind}:\n{str(error)[-3000:]}") from None
    return notebook, time.perf_counter() - start


def code_cells(path: Path) -> list[dict]:
    """The code cells of a notebook with their nbgrader metadata: source, grade_id, and whether graded."""
    notebook = nbformat.read(path, as_version=4)
    cells = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        cells.append({"index": index, "source": cell.source, "grade_id": meta.get("grade_id"),
                      "graded": bool(meta.get("grade"))})
    return cells


def run_cells_in_process(path: Path, replacements: dict[str, str] | None = None) -> dict:
    """Run a notebook's code cells in one namespace, cell sources optionally replaced by grade_id.

    Returns, for every graded cell, the exception it raised or None. Other cells must not raise, except
    where a replaced or unsolved cell's error is expected: those errors are kept under their grade_id too.
    """
    replacements = replacements or {}
    namespace: dict = {"__name__": "__main__"}
    outcomes: dict[str, BaseException | None] = {}
    previous = Path.cwd()
    os.chdir(path.parent)
    try:
        for cell in code_cells(path):
            source = replacements.get(cell["grade_id"], cell["source"])
            if source.lstrip().startswith(("%", "!")):
                continue
            filename = f"<{path.stem} cell {cell['index'] + 1}>"
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            try:
                exec(compile(source, filename, "exec"), namespace)
                error = None
            except Exception as raised:  # noqa: BLE001 - the caller judges every outcome
                error = raised
            if cell["graded"] or cell["grade_id"] in replacements or error is not None:
                outcomes[cell["grade_id"] or filename] = error
    finally:
        os.chdir(previous)
    return outcomes
