"""The mutation tool (tools/mutation): its operators on a tiny kernel, and its runner on a tiny notebook."""

import json
import linecache
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.mutation.mutator import OPERATORS, mutants_of_cell, mutate  # noqa: E402
from tools.mutation.notebook import notebook_mutants  # noqa: E402
from tools.mutation.pool import Pool, load_state  # noqa: E402

SAMPLE = """@cuda.jit
def sample(a, out, partial, n):
    ### BEGIN SOLUTION
    tile = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * 16 + ty
    col = cuda.blockIdx.x * 16 + tx
    k0 = 0
    tile[ty, tx] = a[row, k0 + tx] if row < n and k0 + tx < n else float32(0.0)
    cuda.syncthreads()
    total = float32(0.0)
    for k in range(0, 16, 1):
        total += tile[ty, k]
    best = max(total, 0.0)
    total = (total +  # a statement on two lines
             best)
    if col < n:
        out[row, col] = total
    if tx == 0:
        cuda.atomic.add(partial, 0, total)
    ### END SOLUTION
"""

EXPECTED = {  # (operator, the changed line after the change): one or more per operator
    ("compare", "if col <= n:"),
    ("compare", "if tx != 0:"),
    ("index", "out[row + 1, col] = total"),
    ("index", "total += tile[ty, k - 1]"),
    ("range", "for k in range(1, 16, 1):"),
    ("swap-index", "tx, ty = cuda.threadIdx.y, cuda.threadIdx.y"),
    ("swap-index", "out[col, row] = total"),
    ("swap-index", "tx, ty = (cuda.threadIdx.y, cuda.threadIdx.x)"),
    ("drop-sync", "pass"),
    ("guard", "if True:"),
    ("guard", "tile[ty, tx] = a[row, k0 + tx]"),
    ("guard", "tile[ty, tx] = a[row, k0 + tx] if k0 + tx < n else float32(0.0)"),
    ("drop-guarded", "pass"),
    ("float64", "tile = cuda.shared.array((16, 16), np.float64)"),
    ("float64", "total = np.float64(0.0)"),
    ("reduction", "total *= tile[ty, k]"),
    ("reduction", "total -= tile[ty, k]"),
    ("reduction", "best = min(total, 0.0)"),
    ("reduction", "total = ((total - best"),  # the two lines kept, in parentheses
    ("reduction", "cuda.atomic.max(partial, 0, total)"),
    ("shrink-loop", "for k in range(0, 15, 1):"),
    ("tile-load", "tile[tx, ty] = a[row, k0 + tx] if row < n and k0 + tx < n else float32(0.0)"),
    ("tile-load", "tile[ty, tx] = a[row, k0 + ty] if row < n and k0 + ty < n else float32(0.0)"),
}


def test_every_operator_makes_its_mutants():
    changes = mutate(SAMPLE)
    made = {(change.operator, change.after) for change in changes}
    assert EXPECTED <= made, sorted(EXPECTED - made)
    assert {change.operator for change in changes} == set(OPERATORS)


def test_mutants_are_valid_python_with_the_same_lines_outside_the_change():
    original = SAMPLE.splitlines()
    changes = mutate(SAMPLE)
    assert len({change.source for change in changes}) == len(changes)
    for change in changes:
        compile(change.source, "<mutant>", "exec")
        lines = change.source.splitlines()
        assert len(lines) == len(original), change
        differing = [n for n, (a, b) in enumerate(zip(original, lines, strict=True), 1) if a != b]
        assert differing and differing[0] == change.line, change
        assert set(differing) <= {change.line, change.line + 1}, change  # the two-line statement at most
        assert lines[:3] == original[:3] and lines[-1] == original[-1], "changed outside the solution region"


def test_mutant_ids_are_deterministic_and_distinct():
    first = mutants_of_cell("05_tiled_matmul", 3, "sample_solution", SAMPLE)
    again = mutants_of_cell("05_tiled_matmul", 3, "sample_solution", SAMPLE)
    assert [m.id for m in first] == [m.id for m in again]
    assert len({m.id for m in first}) == len(first)
    assert all(m.id.startswith("05-") and len(m.id) == 11 for m in first)
    other_cell = mutants_of_cell("05_tiled_matmul", 5, "other_solution", SAMPLE)
    assert not {m.id for m in first} & {m.id for m in other_cell}


SETUP = """import numpy as np
from course.tasks import common

def _values(case):
    return np.random.default_rng(case.seed).integers(-9, 10, case.params["n"]).astype(float)

MAGNITUDES = common.Task(name="magnitudes", cases=common.make_cases([{"n": 5}, {"n": 8}]),
                         make_args=lambda case: {"x": _values(case)}, outputs=(common.Output("out"),),
                         reference=lambda case, args: {"out": np.abs(args["x"])}, configure=lambda case: None)
# One case, whose values never equal the limit: `<` and `<=` look alike to it.
COUNT = common.Task(name="count_below", cases=(common.Case((("n", 6),), 5),),
                    make_args=lambda case: {"x": _values(case) % 5, "limit": 2.0},
                    outputs=(common.Output("count"),), configure=lambda case: None, exact=True,
                    reference=lambda case, args: {"count": np.sum(args["x"] < args["limit"])})
"""
MAGNITUDES = """def magnitudes(x):
    ### BEGIN SOLUTION
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = x[i] if x[i] >= 0 else -x[i]
    return out
    ### END SOLUTION
"""
COUNT_BELOW = """def count_below(x, limit):
    ### BEGIN SOLUTION
    total, i = 0, 0
    while i < len(x):
        if x[i] < limit:
            total += 1
        i += 1
    return total
    ### END SOLUTION
"""
CHECKS = """common.check_function(MAGNITUDES, magnitudes, lambda f, args: f(args["x"]))
common.check_function(COUNT, count_below, lambda f, args: f(args["x"], args["limit"]))
"""


def _notebook(folder: Path) -> Path:
    def cell(source, **nbgrader):
        return {"cell_type": "code", "source": source, "outputs": [], "execution_count": None,
                "metadata": {"nbgrader": nbgrader} if nbgrader else {}}

    cells = [cell(SETUP), cell(MAGNITUDES, solution=True, grade_id="magnitudes_solution"),
             cell(COUNT_BELOW, solution=True, grade_id="count_below_solution"),
             cell(CHECKS, grade=True, grade_id="check_both", points=1)]
    path = folder / "99_tiny.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_runner_classifies_killed_survived_equivalent_and_timeout(tmp_path):
    path = _notebook(tmp_path)
    by_change = {(m.operator, m.after): m for m in notebook_mutants(path)}
    wanted = {
        ("reduction", "total *= 1"): "killed",  # counts nothing
        ("compare", "if x[i] <= limit:"): "survived",  # the check's one case has no value equal to the limit
        ("compare", "out[i] = x[i] if x[i] > 0 else -x[i]"): "equivalent",  # |0| either way
        ("reduction", "i *= 1"): "timeout",  # never leaves the loop
    }
    mutants = [by_change[key] for key in wanted]
    records = {}
    state = tmp_path / "state.jsonl"
    pool = Pool(1, 5.0, {"battery": True, "battery_seconds": 20}, state,
                lambda mutant, record: records.__setitem__((mutant.operator, mutant.after), record))
    baselines = pool.run(mutants, {path.stem: path})
    assert baselines[path.stem]["ok"], baselines
    assert {key: records[key]["status"] for key in wanted} == wanted, records
    assert "check_both" in records[("reduction", "total *= 1")]["failed"]
    survivor = records[("compare", "if x[i] <= limit:")]
    assert survivor["reason"].startswith("on n=") and "fails the check" in survivor["reason"], survivor
    assert survivor["battery_cases"] >= 1
    assert set(load_state(state)) == {m.id for m in mutants}  # every result persisted, for a resumed run


@pytest.mark.parametrize("path", sorted(ROOT.glob("solutions/*.ipynb")), ids=lambda p: p.stem)
def test_every_solution_notebook_has_mutants_that_compile(path):
    mutants = notebook_mutants(path)
    assert mutants, f"{path.name}: no mutants"
    for mutant in mutants:
        compile(mutant.source, mutant.id, "exec")


FILL = """
@cuda.jit
def fill(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] if i % 2 == 0 else np.{zero}(0.0)
"""


def test_a_folded_float64_literal_compiles_to_the_same_ptx_and_a_carried_one_does_not():
    """The battery's rule for float64 mutants: same machine code, equivalent (a float64 zero stored into a
    float32 array is folded to float32); float64 work in the PTX, not."""
    import numpy as np
    from numba import cuda

    from course import ptx

    def kernel(source, filename):
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {"cuda": cuda, "np": np}
        exec(compile(source, filename, "exec"), namespace)
        return namespace["fill"]

    kernels = [kernel(FILL.format(zero=zero), f"<fill {zero}>") for zero in ("float32", "float64")]
    kernels.append(kernel(FILL.replace("a[i] if", "a[i] + np.float64(0.1) if").format(zero="float32"),
                          "<fill wide>"))
    arrays = (np.zeros(8, np.float32), np.zeros(8, np.float32))
    narrow, folded, wide = (ptx.normalized(text) for text in ptx.ptx_of_all([(k, arrays) for k in kernels]))
    assert narrow == folded
    assert narrow != wide and any(".f64" in line for line in wide)
