"""Is a surviving mutant equivalent to the original solution? Only if it agrees with it on a large battery.

For every check call that received the mutated cell's functions, the battery reruns the same task (the
course's own ``Task``: ``cases``, ``hidden_sizes``, ``make_args``) on other seeds, on each size with one
parameter one larger or one smaller, and on doubled sizes, keeping only the cases the original solution
passes. On each such case the original and the mutant are run side by side (``common.run`` for kernels,
``common.run_function`` for plain Python) and must agree:

* the mutant passes the check's own judge (and its extra rule, for plain-Python tasks);
* outputs, in float64, within a tenth of the check's tolerance (exactly, for exact tasks);
* the same launches (grids and blocks), and every gpusim counter (sectors, bank conflicts, shared bytes,
  barriers...) within COUNTER_RTOL.

A float64 mutant that agrees on the battery is equivalent only if the compiler made the same machine code of
it: the same PTX as the original's (``course.ptx.normalized``) for every kernel the check compiled, as where
a float64 literal stored into a float32 array is folded to float32. Otherwise the task asks for float32, so
one that gives the same values is still a bug the checks should catch. A mutant with no recorded check
call, or too few battery cases, is not equivalent either.
"""

from __future__ import annotations

import sys
import time
from itertools import zip_longest

import numpy as np

SEEDS = (1001, 1002, 1003, 1004)
MAX_CASES = 40  # battery cases compared per task
MIN_CASES = 6  # fewer compared cases than this (a deadline, or few valid ones) decide nothing
COUNTER_RTOL = 0.02
WRAPPED = ("py_func", "fn", "__wrapped__", "__func__", "func")  # where a kernel or wrapper keeps its function
NEVER_EQUIVALENT = {"float64": "float64 where the task asks for float32 is a bug even so"}


def judge_equivalence(run, outcome, mutant: dict, filename: str, settings: dict) -> dict:
    """{"equivalent": bool, "reason": str, "cases": compared cases} for a mutant that passed every check."""
    pairs = _call_pairs(run, outcome, mutant["cell"], filename)
    if not pairs:
        return {"equivalent": False, "reason": "no course check call received the mutated cell's code, so "
                                               "there is no task to compare on", "cases": 0}
    deadline = time.monotonic() + settings.get("battery_seconds", 60)
    compared = 0
    for original, mutated in pairs:
        difference, count = compare_on_battery(original, mutated, deadline)
        compared += count
        if difference:
            return {"equivalent": False, "reason": difference, "cases": compared}
    if compared < MIN_CASES * len(pairs):
        return {"equivalent": False, "reason": f"undecided: only {compared} battery cases ran before the "
                                               f"deadline", "cases": compared}
    agreement = (f"agrees with the original on {compared} battery cases (other seeds, sizes ±1, doubled "
                 f"sizes): outputs within a tenth of the check's tolerance, counters within "
                 f"{COUNTER_RTOL:.0%}")
    if mutant["operator"] in NEVER_EQUIVALENT:
        same, why = same_machine_code(pairs)
        if same:
            return {"equivalent": True, "reason": f"{agreement}; {why}", "cases": compared}
        return {"equivalent": False, "reason": f"{agreement}; {why}; {NEVER_EQUIVALENT[mutant['operator']]}",
                "cases": compared}
    return {"equivalent": True, "reason": agreement, "cases": compared}


def _call_pairs(run, outcome, cell_index: int, filename: str) -> list:
    """(original call, mutant call), one per task name, for the check calls that received code from the
    mutated cell; failing that, the calls of the first check cell after it."""
    later = [cell.grade_id for cell in run.cells if cell.graded and cell.index > cell_index]
    candidates = []
    for grade_id in later:
        originals, mutated = run.baseline.calls.get(grade_id, []), outcome.calls.get(grade_id, [])
        candidates += [(grade_id, a, b) for a, b in zip(originals, mutated, strict=False) if a.kind == b.kind]
    relevant = ([c for c in candidates if filename in _code_files(c[2])]
                or [c for c in candidates if c[0] == later[0]])
    pairs, names = [], set()
    for _, original, mutated in relevant:
        name = getattr(mutated.arguments.get("task"), "name", None)
        if name not in names:
            names.add(name)
            pairs.append((original, mutated))
    return pairs


def _code_files(call) -> set[str]:
    """File names of the code of the learner functions one check call received."""
    learner = call.arguments.get("learner") if call.kind == "check" else {"f": call.arguments.get("function")}
    files = set()
    for value in (learner or {}).values():
        for _ in range(6):
            code = getattr(value, "__code__", None)
            if code is not None:
                files.add(code.co_filename)
                break
            value = next((getattr(value, name) for name in WRAPPED
                          if getattr(value, name, None) is not None), None)
            if value is None:
                break
    return files


def same_machine_code(pairs) -> tuple[bool, str]:
    """(whether every kernel the mutant's checks compiled has the original's PTX, what was found): the
    kernels are caught as the compile gate receives them, on each task's first battery size."""
    from course import compilegate, ptx

    if not compilegate.available()[0]:
        return False, "no compiler to compare machine code with"
    common = sys.modules["course.tasks.common"]
    jobs = []
    for original, mutated in pairs:
        size, seed = battery_sizes(mutated.arguments["task"])[0]
        case = common.make_cases([size], [seed])[0]
        jobs.append((_compiled(common, original, case), _compiled(common, mutated, case)))
    if not any(before for before, _ in jobs):
        return False, "no kernel was compiled, so there is no machine code to compare"
    for before, after in jobs:
        if [signature for _, signature in before] != [signature for _, signature in after]:
            return False, "its kernels are compiled for other argument types"
        texts = ptx.results_of_specs(before + after)
        if any("error" in text for text in texts):
            return False, "a kernel did not compile"
        codes = [ptx.normalized(text["ptx"]) for text in texts]
        if codes[:len(before)] != codes[len(before):]:
            return False, "its PTX differs from the original's"
    return True, "and compiles to the original's PTX (the compiler folded the float64 away)"


def _compiled(common, call, case) -> list[tuple]:
    """(spec, signature) of every kernel the compile gate received while one check call ran one case."""
    from course import compilegate

    received, gate = [], compilegate.compile_kernel

    def recording(spec, signature, arithmetic=None):
        received.append((spec, signature))
        return gate(spec, signature, arithmetic)

    compilegate.compile_kernel = recording
    try:
        _result(common, call, case, judge=False)
    finally:
        compilegate.compile_kernel = gate
    return received


# ------------------------------------------------------------------------------------------------ cases

def battery_sizes(task) -> list[tuple[dict, int]]:
    """(sizes, seed) of the battery for a task: the check's sizes and hidden sizes on new seeds, each size
    with one parameter ±1, and each size doubled; interleaved so a cap keeps some of each kind."""
    base = _unique([dict(case.params) for case in task.cases] + [dict(s) for s in task.hidden_sizes])
    near, larger = [], []
    for size in base:
        for name, value in size.items():
            for step in (1, -1):
                if isinstance(value, int) and value + step >= 1:
                    near.append({**size, name: value + step})
        larger.append({name: 2 * value if isinstance(value, int) and value > 1 else value
                       for name, value in size.items()})
    near = [size for size in _unique(near) if size not in base]
    larger = [size for size in _unique(larger) if size not in base]
    kinds = [[(size, SEEDS[0]) for size in base], [(size, SEEDS[1]) for size in near],
             [(size, SEEDS[2]) for size in larger], [(size, SEEDS[3]) for size in base]]
    return [item for group in zip_longest(*kinds) for item in group if item is not None]


def _unique(sizes: list[dict]) -> list[dict]:
    seen, kept = set(), []
    for size in sizes:
        key = tuple(size.items())
        if key not in seen:
            seen.add(key)
            kept.append(size)
    return kept


# ---------------------------------------------------------------------------------------------- compare

def compare_on_battery(original, mutated, deadline: float) -> tuple[str | None, int]:
    """(the first difference found, or None; the number of cases compared) for one pair of check calls."""
    common = sys.modules["course.tasks.common"]
    task = mutated.arguments["task"]
    compared = 0
    for size, seed in battery_sizes(task):
        if compared >= MAX_CASES or time.monotonic() > deadline:
            break
        try:
            case = common.make_cases([size], [seed])[0]
            expected = _result(common, original, case)
        except Exception:  # noqa: BLE001 - a size the task cannot build is not a battery case
            continue
        if expected is None:
            continue
        try:
            got = _result(common, mutated, case, judge=False)
        except Exception as error:  # noqa: BLE001 - the mutant broke the machinery: a difference
            return f"on {case.label()} the mutant raised {type(error).__name__}: {error}", compared + 1
        compared += 1
        message = _judge(common, mutated, case, got)
        difference = message or _difference(task, expected, got)
        if difference:
            return f"on {case.label()}: {difference.splitlines()[0][:400]}", compared
    return None, compared


def _result(common, call, case, judge: bool = True) -> dict | None:
    """One case's result for one check call; with `judge`, None when it fails the check (not a valid
    battery case for the original)."""
    arguments = call.arguments
    if call.kind == "check":
        result = common.run(arguments["task"], arguments["learner"], case)
    else:
        result = common.run_function(arguments["task"], arguments["function"], case, arguments["call"])
    if judge and _judge(common, call, case, result):
        return None
    return result


def _judge(common, call, case, result) -> str | None:
    message = common.judge(call.arguments["task"], case, result)
    extra = call.arguments.get("extra") if call.kind == "check_function" else None
    if message is None and extra is not None:
        message = extra(case, call.arguments["function"])
    return f"fails the check: {message}" if message else None


def _difference(task, expected: dict, got: dict) -> str | None:
    """How the mutant's result differs from the original's, or None."""
    if got.get("error"):
        return f"raised {got['error'].get('type')}: {got['error'].get('message', '')}"
    for name in expected["outputs"]:
        want = np.asarray(expected["outputs"][name])
        have = np.asarray(got["outputs"].get(name))
        if want.shape != have.shape:
            return f"`{name}` has shape {have.shape}, the original's {want.shape}"
        if task.exact or want.dtype.kind in "biu":
            if not np.array_equal(want, have):
                return f"`{name}` differs in {int((want != have).sum())} elements"
            continue
        want64, have64 = want.astype(np.float64), have.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.isclose(have64, want64, rtol=task.rtol / 10, atol=task.atol / 10, equal_nan=True)
        if not close.all():
            worst = np.nanmax(np.abs(have64 - want64)) if np.isfinite(have64 - want64).any() else np.nan
            return f"`{name}` differs in {int((~close).sum())} elements (by up to {worst:.3g})"
    shapes = [[launch[:2] for launch in result.get("launches") or []] for result in (expected, got)]
    if shapes[0] != shapes[1]:  # dynamic shared bytes: compared below, as a counter, within the tolerance
        return f"launches grids and blocks {shapes[1]} instead of {shapes[0]}"
    want_report, got_report = expected.get("report") or {}, got.get("report") or {}
    changed = []
    for counter in sorted(set(want_report) | set(got_report)):
        a, b = want_report.get(counter), got_report.get(counter)
        if isinstance(a, float) or isinstance(b, float):
            continue  # ratios follow from the integer counters
        if a != b and (a is None or b is None or abs(a - b) > COUNTER_RTOL * max(abs(a), abs(b))):
            changed.append(f"{counter} {a} → {b}")
    return f"gpusim counters differ (original → mutant): {', '.join(changed)}" if changed else None
