"""The course uses gpusim as any other project would: through `gpusim`'s own names and the modules its README
documents (gpusim.viz, gpusim.report), never its private modules, so gpusim's package can change inside."""

import ast
import json
import re

import numpy as np
from notebook_runs import ROOT

import gpusim

PUBLIC_MODULES = {"viz", "report", "pytest_plugin", "examples"}  # documented in gpusim/README.md
PRIVATE_MODULES = {path.stem for path in (ROOT / "gpusim").glob("*.py")} - PUBLIC_MODULES - {"__init__"}
COURSE_CODE = ["utils.py", "course/**/*.py", "bench/**/*.py", "tools/**/*.py"]
NOTEBOOKS = ["notebooks/*.ipynb", "solutions/*.ipynb"]
GPUSIM_OWN = {"bench/sim_profile.py"}  # splits gpusim's time into its inner parts: gpusim's, not the course's


def reaches(source: str, where: str) -> list[str]:
    """Every import of, or attribute path through, a private gpusim module in a piece of Python."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = ([f"gpusim.{alias.name}" for alias in node.names] if node.module == "gpusim"
                     else [node.module])
        elif isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "gpusim":
            names = [f"gpusim.{node.attr}"]
        found += [f"{where}:{node.lineno}: {name}" for name in names
                  if re.fullmatch(r"gpusim\.(\w+).*", name) and name.split(".")[1] in PRIVATE_MODULES]
    return found


def code_cells(path):
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            if not source.lstrip().startswith(("%", "!")):
                yield index + 1, source


def test_the_check_finds_each_kind_of_reach():
    source = ("import gpusim.sites\nfrom gpusim.sweep import compare\nfrom gpusim import sites\n"
              "gpusim.linked.MMA_LAYOUT\nfrom gpusim import jit\ngpusim.viz.thread_map\n"
              "gpusim.report.combine\n")
    assert [line.split(": ")[1] for line in reaches(source, "x")] == [
        "gpusim.sites", "gpusim.sweep", "gpusim.sites", "gpusim.linked"]


def test_the_course_reaches_into_no_private_gpusim_module():
    found = []
    for pattern in COURSE_CODE:
        for path in sorted(ROOT.glob(pattern)):
            if str(path.relative_to(ROOT)) not in GPUSIM_OWN:
                found += reaches(path.read_text(), str(path.relative_to(ROOT)))
    for pattern in NOTEBOOKS:
        for path in sorted(ROOT.glob(pattern)):
            for cell, source in code_cells(path):
                found += reaches(source, f"{path.relative_to(ROOT)} cell {cell}")
    assert found == []


def test_the_names_tools_build_on_are_public():
    assert gpusim.place_name("kernels.py", 7) == "kernels.py:7"
    assert gpusim.describe_line(__file__, 1).startswith("test_gpusim_public_api.py:1 (`")
    assert gpusim.MMA_LAYOUT["A"].shape[0] == gpusim.WARP_SIZE

    def plain(a):
        a[0] = 1

    assert gpusim.python_function(plain) is plain
    assert not gpusim.is_cuda_stand_in(np)
    same = gpusim.schedule_difference(gpusim.schedules(64)[1], ["out"], [np.zeros(2)], [np.zeros(2)])
    differs = gpusim.schedule_difference(gpusim.schedules(64)[1], ["out"], [np.zeros(2)], [np.ones(2)])
    assert same is None and isinstance(differs, gpusim.ScheduleError) and "out[0]" in str(differs)
