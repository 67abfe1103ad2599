"""Launches gathered from the whole repository, for tests that run every one of them several ways.

A `Launch` is a kernel, its launch configuration, and a function that makes fresh, identical arguments on
every call. `launches()` collects them from the suite's kernels (tests/gpusim_kernels.py, the golden record's
and the front-end comparison's cases), gpusim's example tests, bench/sim_speed.py, the course's kernels (the
matmul ladder, softmax, attention), the reference solutions of the exercise notebooks on their checks' cases
(their solution cells only: no demo or check cell runs), and the known-wrong solutions whose check names a
gpusim error.
Sizes are small: a launch takes milliseconds to a second on the per-thread engine.
"""

import copy
import importlib
import importlib.util
import linecache
import math
from dataclasses import dataclass, field
from typing import Callable

import gpusim_frontend_cases as frontend
import gpusim_kernels as K
import numpy as np
import test_gpusim_golden as golden
from notebook_runs import ROOT, code_cells

import gpusim

GPUSIM_ERRORS = tuple(name for name in gpusim.__all__ if name.endswith("Error"))
SLOW_ERRORS = ("KernelTimeoutError",)  # a wrong solution that only stops at its timeout: seconds of nothing


@dataclass(frozen=True)
class Launch:
    """kernel[config](*make_args()), with gpusim.jit(kernel, **options)."""

    name: str
    kernel: object
    config: tuple
    make_args: Callable[[], list]
    options: dict = field(default_factory=dict)
    ends_unchecked: bool = True  # False: only the checks stop it (unchecked, a deadlock spins to its timeout)


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def poisoned(*shape, dtype=np.float32):
    """An output that starts as NaN, so an element nobody writes stays visible."""
    return np.full(shape, np.nan, dtype)


def fresh(values):
    """Copies of recorded arguments: arrays copied (same layout), scalars as they are."""
    return [value.copy(order="K") if isinstance(value, np.ndarray) else copy.copy(value) for value in values]


def recorded(name, kernel, config, values, options=None):
    """A launch whose arguments were recorded once: every call copies them."""
    snapshot = fresh(values)
    return Launch(name, kernel, config, lambda: fresh(snapshot), options or {})


# ------------------------------------------------------------------------------------ the suite's own kernels


def golden_launches():
    """The golden record's cases (tests/test_gpusim_golden.py), correct and buggy."""
    found = []
    for name, (kernel, config, make_args) in golden.cases().items():
        config = config if len(config) != 4 else (config[0], config[1], 0, config[3])
        found.append(Launch(f"golden/{name}", kernel, config, make_args))
    return found


def frontend_launches():
    """The front-end comparison's cases of tests/gpusim_kernels.py (tests/gpusim_frontend_cases.py). Those of
    tests/gpusim_named_kernels.py are left out: their `from numba.cuda import grid, ...` needs numba-cuda
    itself, and this suite runs with NUMBA_ENABLE_CUDASIM=1."""
    found = []
    for name, case in frontend.CASES.items():
        if case.module == "K":
            options = {key: value for key, value in case.options.items() if key != "check"}
            found.append(Launch(f"frontend/{name}", frontend._kernel(K, case.kernel), case.config,
                                case.make_args, options))
    return found


def suite_launches():
    """More kernels of tests/gpusim_kernels.py, at awkward sizes and shapes."""
    ramp = np.arange(100, dtype=np.int32)
    return [
        Launch("vector_add/n=1", K.vector_add, (1, 32), lambda: [rand(1), rand(1, seed=1), poisoned(1)]),
        Launch("vector_add/n=97", K.vector_add, (4, 32),
               lambda: [rand(97), rand(97, seed=1), poisoned(97)]),
        Launch("scale_add/n=100", K.scale_add, (2, 64), lambda: [rand(100), 1.5, -0.25, poisoned(100)]),
        Launch("scale_add/float64", K.scale_add, (3, 32),
               lambda: [rand(70, dtype=np.float64), 3.0, 1e-3, poisoned(70, dtype=np.float64)]),
        Launch("block_reverse/out_of_range", K.block_reverse, (2, 64),
               lambda: [ramp, np.zeros(100, np.int32)]),
        Launch("block_sum/n=1", K.block_sum, (1, 128), lambda: [rand(1), poisoned(1)]),
        Launch("block_sum/n=300", K.block_sum, (3, 128), lambda: [rand(300), poisoned(3)]),
        Launch("matmul_naive/20x33x18", K.matmul_naive, ((2, 3), (16, 8)),
               lambda: [rand(20, 33), rand(33, 18, seed=1), poisoned(20, 18)]),
        Launch("matmul_naive/3d_block", K.matmul_naive, ((1, 2, 2), (8, 8, 2)),
               lambda: [rand(8, 5), rand(5, 16, seed=1), poisoned(8, 16)]),
        Launch("matmul_tiled/8x8_out_of_range", K.make_matmul_tiled(8), ((2, 2), (8, 8)),
               lambda: [rand(12, 16), rand(16, 12, seed=1), poisoned(12, 12)]),
        Launch("index_report/3d", K.index_report, ((2, 1, 2), (4, 2, 3)), lambda: [poisoned(6, 2, 8, 5)]),
        Launch("warp_scan_shfl_up", K.warp_scan_shfl_up, (2, 64), lambda: [rand(128), poisoned(128)]),
        Launch("warp_misc", K.warp_misc, (1, 64), lambda: [rand(64), np.zeros((64, 7), np.int64)]),
        Launch("shfl_after_early_return", K.shfl_after_early_return, (1, 32),
               lambda: [rand(32), poisoned(32), 20]),
        Launch("copy_coalesced/int16", K.copy_coalesced, (2, 32),
               lambda: [np.arange(64, dtype=np.int16), np.zeros(64, np.int16)]),
        Launch("copy_coalesced/too_few", K.copy_coalesced, (2, 32), lambda: [rand(50), poisoned(50)]),
        Launch("big_shared", K.big_shared, (1, 1), lambda: [poisoned(1)]),
        Launch("plain_copy", K.plain_copy, (2, 16), lambda: [rand(32), poisoned(32)]),
        Launch("block_sum/random_order", K.block_sum, (2, 128), lambda: [rand(200), poisoned(2)],
               {"schedule": "random", "seed": 7}),
        Launch("scan_double_buffer/random_order", K.scan_double_buffer, (1, 64),
               lambda: [rand(64), poisoned(64)], {"schedule": "random", "seed": 3}),
    ]


def example_launches():
    """gpusim/examples/test_example_kernels.py: the kernels a user's own tests would check."""
    ex = importlib.import_module("gpusim.examples.test_example_kernels")
    return [
        Launch("examples/block_sums/n=1", ex.block_sums, (1, 64), lambda: [rand(1), poisoned(1)]),
        Launch("examples/block_sums/n=1000", ex.block_sums, (16, 64), lambda: [rand(1000), poisoned(16)]),
        Launch("examples/block_sums_no_barrier", ex.block_sums_no_barrier, (2, 64),
               lambda: [rand(128), poisoned(2)]),
        Launch("examples/block_sums_divergent_barrier", ex.block_sums_divergent_barrier, (2, 64),
               lambda: [rand(128), poisoned(2)]),
        Launch("examples/differences", ex.differences, (2, 64), lambda: [rand(100), poisoned(100)]),
    ]


def bench_launches():
    """bench/sim_speed.py's tiled matmul, the kernel the speed targets are measured on."""
    spec = importlib.util.spec_from_file_location("sim_speed", ROOT / "bench" / "sim_speed.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return [Launch(f"bench/matmul_tiled/{n}", bench.matmul_tiled, ((n // 16, n // 16), (16, 16)),
                   lambda n=n: [*bench.inputs(n), poisoned(n, n)]) for n in (16, 48)]


# --------------------------------------------------------------------------------------- the course's kernels


def _matmul(m, k, n, seed=0):
    return lambda: [rand(m, k, seed=seed), rand(k, n, seed=seed + 1), poisoned(m, n)]


def matmul_ladder_launches():
    """course/kernels/matmul.py, every fp32 rung, at a few blocks of small tiles."""
    from course.kernels import matmul as mm

    found = [
        Launch("course/matmul_naive/20x33x18", mm.matmul_naive, ((2, 2), (16, 16)), _matmul(20, 33, 18)),
        Launch("course/matmul_tiled16", mm.matmul_tiled16, ((2, 2), (16, 16)), _matmul(32, 48, 32)),
        Launch("course/matmul_tiled_dynamic/t=8", mm.matmul_tiled_dynamic, ((3, 2), (8, 8), 0, 512),
               lambda: [*_matmul(16, 24, 24)(), 8]),
        Launch("course/tiled_matmul(8)", mm.make_tiled_matmul(8).kernel, ((3, 2), (8, 8)),
               _matmul(16, 24, 24)),
        Launch("course/coarsened(8,2)", mm.make_coarsened_matmul(8, 2).kernel, ((2, 2), (8, 8)),
               _matmul(32, 16, 16)),
        Launch("course/double_buffered(8)", mm.make_double_buffered_matmul(8).kernel, ((2, 2), (8, 8)),
               _matmul(16, 24, 16)),
    ]
    regtile = dict(BM=32, BN=32, BK=8, TM=4, TN=4)  # 64 threads, one 32 x 32 tile of C each
    for name, launch in [
        ("regtile_local", mm.make_regtile_matmul_local(**regtile)),
        ("regtile", mm.make_regtile_matmul(**regtile)),
        ("regtile_prefetch", mm.make_regtile_matmul(**regtile, prefetch=True)),
        ("regtile_vec", mm.make_regtile_matmul_vec(**regtile)),
        ("regtile_vec_unroll2", mm.make_regtile_matmul_vec(**regtile, UNROLL=2)),
        ("regtile_vec_double_buffer", mm.make_regtile_matmul_vec(**regtile, double_buffer=True)),
    ]:
        found.append(Launch(f"course/{name}", launch.kernel, ((1, 2), 64), _matmul(64, 24, 32)))
    warptile = dict(BM=32, BN=32, BK=8, WM=32, WN=16, TM=4, TN=4)  # 2 warps of 8 x 4 lanes
    for name, launch in [("warptile", mm.make_warptile_matmul(**warptile)),
                         ("warptile_pipelined", mm.make_warptile_matmul(**warptile, pipelined=True))]:
        found.append(Launch(f"course/{name}", launch.kernel, ((2, 1), launch.threads), _matmul(32, 24, 64)))
    return found


def softmax_launches():
    from course.kernels.softmax import make_softmax_rows

    kernel = make_softmax_rows(32).kernel
    return [Launch("course/softmax_rows/5x70", kernel, (5, 32), lambda: [rand(5, 70), poisoned(5, 70)])]


def _qkv(bh, n, d, seed=0):
    return [rand(bh, n, d, seed=seed + i) for i in range(3)]


def attention_launches():
    """course/kernels/attention.py versions 1-4 and 6 at one or two blocks of small tiles."""
    from course.kernels import attention as at

    def args(bh, n, d, flat=False):
        def make():
            q, k, v = _qkv(bh, n, d)
            if flat:
                k, v = k.reshape(-1), v.reshape(-1)
            return [q, k, v, poisoned(bh, n, d), poisoned(bh, n), at.q_scale(d)]

        return make

    found = []
    for causal in (False, True):
        tag = "causal" if causal else "full"
        found += [
            Launch(f"course/flash_row/{tag}", at.make_flash_row(8, causal).kernel, ((2, 2), 16),
                   args(2, 20, 8)),
            Launch(f"course/flash_smem/{tag}", at.make_flash_smem(8, 16, causal).kernel, ((2, 1), 16),
                   args(1, 32, 8)),
        ]
    regtile = at.make_flash_regtile(D=16, BQ=16, BKV=16, TX=4, TY=4)
    found.append(Launch("course/flash_regtile", regtile.kernel, ((2, 1), 16), args(1, 32, 16)))
    v4 = at.make_flash_regtile_v4(D=16, BQ=16, BKV=16, TX=4, TY=4)
    found.append(Launch("course/flash_regtile_v4", v4.kernel, ((2, 1), 16, 0, v4.shared_bytes),
                        args(1, 32, 16)))
    for causal in (False, True):
        v6 = at.make_flash_v6(16, 32, 16, 4, 8, causal, UNROLL=2)
        found.append(Launch(f"course/flash_v6/{'causal' if causal else 'full'}", v6.kernel,
                            ((2, 1), 32, 0, v6.shared_bytes), args(1, 64, 16, flat=True)))
    return found


class _Recorder:
    """Stands in for gpusim.jit in a course launcher's `wrap=`: records each launch, then runs it (unchecked,
    on the default engine) so that a later launch sees what an earlier one wrote."""

    def __init__(self, name, found):
        self.name, self.found = name, found

    def __call__(self, kernel):
        def launch_with(config):
            def call(*values):
                label = f"{self.name}/{len(self.found) + 1}"
                self.found.append(recorded(label, kernel, config, values))
                gpusim.jit(kernel, check=False)[config](*values)

            return call

        return type("Recorded", (), {"__getitem__": lambda _, config: launch_with(config)})()


def wrapped_launches():
    """Launchers that take `wrap=`: attention version 7 and both backward versions, as their tests run."""
    from course.kernels.attention_backward import make_flash_backward, make_flash_backward_v2
    from course.kernels.attention_v7 import make_flash_v7

    found = []
    for causal, pairs in ((False, False), (True, True)):
        launch = make_flash_v7(16, 32, 16, 4, 8, causal, UNROLL=2, PAIRS=pairs)
        q, k, v = _qkv(2, 50, 16)
        launch(q, k, v, poisoned(2, 50, 16), poisoned(2, 50),
               wrap=_Recorder(f"course/flash_v7/{'causal_pairs' if causal else 'full'}", found))
    for name, factory, (bh, n, d, bq, bkv) in (("v1", make_flash_backward, (2, 37, 16, 16, 8)),
                                              ("v2", make_flash_backward_v2, (1, 50, 8, 16, 16))):
        q, k, v = _qkv(bh, n, d)
        d_o = rand(bh, n, d, seed=5)
        o, lse = rand(bh, n, d, seed=6), np.abs(rand(bh, n, seed=7)) + 1
        grads = [poisoned(bh, n, d) for _ in range(3)]
        factory(d, bq, bkv, True)(q, k, v, o, d_o, lse, *grads, poisoned(bh, n),
                                  wrap=_Recorder(f"course/flash_backward_{name}", found))
    return found


def tensorcore_launches():
    """Version 13 of the bf16 matmul: mma.sync stood in for by gpusim's NumPy model."""
    from course.kernels import tensorcore as tc

    launch = tc.make_mma_matmul_simple(BM=32, BN=32, BK=16, WM=16, WN=16)

    def make():
        bits = (rand(64, 32).view(np.uint32) >> 16).astype(np.uint16)
        return [bits[:32].view(np.int32), bits[32:].view(np.int32), poisoned(32, 32)]

    return [Launch("course/tensorcore_v13", launch.kernel, ((1, 1), launch.threads), make)]


# ----------------------------------------------------------------------------------------- exercise solutions


def _exercise_notebooks():
    return {path.stem: path for path in sorted((ROOT / "solutions").glob("0*.ipynb"))}


def solution_namespace(path, replacements=None, variant=""):
    """A notebook's setup, constant and solution cells (nbgrader cells that are not checks) run in order in a
    fresh namespace, a cell optionally replaced by grade_id; demo and check cells are not run. Each `variant`
    gets file names of its own: gpusim rebuilds kernels from the source that linecache holds for their file,
    so two versions of a cell under one name would run each other's code."""
    replacements = replacements or {}
    namespace = {"__name__": f"solutions {path.stem}"}
    for cell in code_cells(path):
        if cell["grade_id"] is None or cell["graded"]:
            continue
        source = replacements.get(cell["grade_id"], cell["source"])
        filename = f"<{path.stem} cell {cell['index'] + 1}{variant} (engines corpus)>"  # not another test's
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
    return namespace


def _task_module(stem):
    return importlib.import_module(f"course.tasks.part{stem[:2]}")


def _kernel_of(task, namespace):
    """The learner's kernel a task checks, from a solution namespace (None for a function exercise)."""
    if task.name.startswith("make_tiled_matmul("):
        return namespace["make_tiled_matmul"](int(task.name[len("make_tiled_matmul("):-1]))
    kernel = namespace.get(task.name)
    return kernel if hasattr(kernel, "py_func") else None


def _fresh_task_args(task, case):
    from course.tasks.common import fill_output

    args = task.make_args(case)
    for output in task.outputs:
        fill_output(args[output.name], output.fill)
    return args


def task_launches(task, namespace, case, label, ends_unchecked=True, options=None):
    """The launches a task's check makes for one case: its configuration, or the learner's launcher's
    (``options``: for gpusim.jit)."""
    options = options or {}
    from course.tasks.common import plan_launches

    kernel = _kernel_of(task, namespace)
    if task.configure is not None:
        return [Launch(label, kernel, tuple(task.configure(case)),
                       lambda: list(_fresh_task_args(task, case).values()), options,
                       ends_unchecked=ends_unchecked)]
    plan = plan_launches(task, namespace[task.launcher], case)
    if plan["error"]:
        raise RuntimeError(f"{label}: the launch function failed: {plan['error']}")
    found = []
    for number, step in enumerate(plan["launches"]):
        config = (tuple(step["grid"]), tuple(step["block"]), 0, step["shared"])

        def make(step=step):
            args = _fresh_task_args(task, case)
            return [args[item["arg"]] if "arg" in item else item["value"] for item in step["args"]]

        found.append(Launch(label + (f"/{number + 1}" if len(plan["launches"]) > 1 else ""), kernel, config,
                            make, options, ends_unchecked=ends_unchecked))
    return found


def _two_cases(task):
    """The task's smallest case and the check's first (its middle one by size where the first is the
    smallest): an edge and an ordinary uneven launch, chosen by hand, that drawn cases do not move."""
    by_size = sorted(task.cases, key=lambda case: math.prod(case.params.values()))
    first = task.cases[0]
    return [by_size[0], first if first != by_size[0] else by_size[len(by_size) // 2]]


def _label(task, case):
    kind = f"{task.name}/launch" if task.launcher else task.name
    return f"{kind}/" + ",".join(f"{key}={value}" for key, value in case.params.items())


def solution_launches():
    """Every kernel exercise's reference solution on two of its check's cases."""
    found = []
    for stem, path in _exercise_notebooks().items():
        namespace = solution_namespace(path)
        for task in _task_module(stem).TASKS:
            if _kernel_of(task, namespace) is None:
                continue
            for case in _two_cases(task):
                found += task_launches(task, namespace, case, f"solution/{_label(task, case)}")
    return found


def _replaced_tasks(tasks, replaces):
    """The tasks whose learner code a solution cell (grade_id `replaces`) defines."""
    defined = replaces.removesuffix("_solution")
    return [task for task in tasks
            if defined in (task.name, task.launcher) or task.name.startswith(f"{defined}(")]


def _first_failing_case(task, namespace):
    """The first of the task's cases on which gpusim (checked) stops the learner's launches, as the check
    would find it; the middle case when none does."""
    for case in task.cases:
        for launch in task_launches(task, namespace, case, "probe"):
            try:
                gpusim.jit(launch.kernel, engine="thread")[launch.config](*launch.make_args())
            except gpusim.KernelError:
                return case
    return _two_cases(task)[1]


def wrong_solution_launches():
    """Known-wrong solutions (tests/wrong_solutions) whose check names a gpusim error, on the first case where
    gpusim stops them: races, barriers that not every thread reaches, out-of-bounds and uninitialised reads,
    deadlocks."""
    import runpy

    from course.tasks.common import STRICT  # as the checks run them

    found = []
    notebooks = _exercise_notebooks()
    for fixture in sorted((ROOT / "tests" / "wrong_solutions").glob("0*/*.py")):
        spec = runpy.run_path(str(fixture))
        expected = " ".join(spec["FAILS"].values())
        if not any(error in expected for error in GPUSIM_ERRORS) or any(e in expected for e in SLOW_ERRORS):
            continue
        stem = fixture.parent.name
        replacement = {spec["REPLACES"]: spec["SOURCE"]}
        namespace = solution_namespace(notebooks[stem], replacement, f", {fixture.stem}")
        for task in _replaced_tasks(_task_module(stem).TASKS, spec["REPLACES"]):
            case = _first_failing_case(task, namespace)
            label = f"wrong/{stem[:2]}/{fixture.stem}/{_label(task, case)}"
            ends_unchecked = "DeadlockError" not in expected
            found += task_launches(task, namespace, case, label, ends_unchecked, {"strict": STRICT})
    return found


def launches():
    """Every launch of the corpus, in a fixed order, names unique."""
    found = (golden_launches() + frontend_launches() + suite_launches() + example_launches()
             + bench_launches() + matmul_ladder_launches() + softmax_launches() + attention_launches()
             + wrapped_launches() + tensorcore_launches() + solution_launches() + wrong_solution_launches())
    names = [launch.name for launch in found]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    assert not duplicates, f"launch names must be unique: {duplicates}"
    return found

