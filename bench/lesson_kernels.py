"""The kernels a lesson defines, loaded from the notebook itself, so that bench/gpu_lessons.py times
exactly the code the lesson shows: the code cells tagged `bench-kernels` run in order in a fresh namespace
that starts with `from utils import *`. Their source lines stay readable (linecache), as in Jupyter."""

import json
import linecache
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
TAG = "bench-kernels"


def tagged_sources(notebook):
    cells = json.loads((NOTEBOOKS / notebook).read_text())["cells"]
    return ["".join(cell["source"]) for cell in cells
            if cell["cell_type"] == "code" and TAG in cell.get("metadata", {}).get("tags", [])]


def load(notebook):
    """The namespace of notebook's tagged cells (names -> kernels, helpers and constants)."""
    sources = tagged_sources(notebook)
    if not sources:
        raise LookupError(f"notebooks/{notebook} has no code cell tagged '{TAG}'.")
    namespace = {"__name__": f"lesson {notebook}"}
    exec("from utils import *", namespace)
    for index, source in enumerate(sources):
        filename = f"<{notebook}, tagged cell {index + 1}>"
        # As Jupyter does: tools that read a kernel's source (course.ptx, gpusim's messages) find it.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
    return namespace
