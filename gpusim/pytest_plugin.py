"""`pytest --gpusim`: every Numba CUDA kernel a test suite launches runs under gpusim, checked.

Installing gpusim registers this plugin; it does nothing until `--gpusim` is given. Then a launch
`kernel[grid, block](*args)` of a `@cuda.jit` kernel (numba-cuda's dispatcher, or its simulator's kernel under
NUMBA_ENABLE_CUDASIM=1) goes to `gpusim.jit(kernel, ...)[grid, block, stream, shared](*args)` instead, so a
race, a divergent barrier or an index out of bounds fails the test that launched it, with gpusim's message,
and no GPU is needed. At the end, a table gives each kernel's launches and memory counters.

Device arrays of Numba's simulator (`cuda.to_device`) are handed to gpusim as the NumPy arrays they hold, so
results land where the test reads them; arrays on a real GPU cannot be, and tests that make them need a GPU
(or NUMBA_ENABLE_CUDASIM=1).
"""

from contextlib import ExitStack
from unittest import mock

import pytest

from . import report as reports
from .launch import jit

COUNTERS = ("blocks", "threads", "barriers", "global_loads", "global_stores", "global_sectors",
            "bank_conflicts")


def pytest_addoption(parser):
    group = parser.getgroup("gpusim", "gpusim: Numba CUDA kernels simulated and checked on the CPU")
    group.addoption("--gpusim", action="store_true",
                    help="run each Numba CUDA kernel launch under gpusim (races, barriers, bounds, counters)")
    group.addoption("--gpusim-schedule", default="sequential", metavar="NAME[:N]",
                    help="thread order: sequential (default), random:SEED, hold:WARP, ahead:WARP, delay:WARP")
    group.addoption("--gpusim-unchecked", action="store_true",
                    help="run launches unchecked (faster; barrier and warp mismatches are still errors)")


def parse_schedule(text):
    """'random:3' -> ('random', 3); 'sequential' -> 'sequential'."""
    name, _, number = text.partition(":")
    if not number:
        return name
    try:
        return name, int(number)
    except ValueError:
        raise pytest.UsageError(f"--gpusim-schedule {text!r}: after ':' comes an integer") from None


def host_array(arg):
    """The NumPy array behind a Numba-simulator device array; anything else unchanged."""
    held = getattr(arg, "_ary", None)
    return held if held is not None and hasattr(arg, "copy_to_host") else arg


class Launches:
    """Routes Numba's kernel launches to gpusim and adds up each kernel's counters."""

    def __init__(self, check, schedule):
        self.check, self.schedule = check, schedule
        self.kernels = {}  # python function -> gpusim.Kernel
        self.totals = {}  # kernel name -> (launches, combined counters)

    def launch(self, kernel, grid, block, stream, shared, args):
        function = getattr(kernel, "py_func", None) or kernel.fn
        if function not in self.kernels:
            self.kernels[function] = jit(kernel, check=self.check, schedule=self.schedule)
        simulated = self.kernels[function]
        simulated[grid, block, stream, shared](*(host_array(arg) for arg in args))
        count, counters = self.totals.get(function.__qualname__, (0, {}))
        self.totals[function.__qualname__] = (count + 1,
                                              reports.combine(counters, simulated.report.as_dict()))

    def patches(self):
        """Context managers that replace numba-cuda's launch paths (those importable here)."""
        launches = self

        def dispatcher_call(configured, *args):
            launches.launch(configured.dispatcher, configured.griddim, configured.blockdim, 0,
                            configured.sharedmem, args)

        found = []
        try:
            from numba.cuda.dispatcher import _LaunchConfiguration

            found.append(mock.patch.object(_LaunchConfiguration, "__call__", dispatcher_call))
        except ImportError:
            pass
        try:
            from numba.cuda.simulator import kernel as simulator
        except ImportError:
            return found
        numba_call = simulator.FakeCUDAKernel.__call__

        def simulator_call(kernel, *args):
            if kernel._device or simulator._kernel_context:  # a device function, or a call inside a kernel
                return numba_call(kernel, *args)
            launches.launch(kernel, kernel.grid_dim, kernel.block_dim, 0, kernel.dynshared_size, args)
            return None

        found.append(mock.patch.object(simulator.FakeCUDAKernel, "__call__", simulator_call))
        return found


LAUNCHES = pytest.StashKey[Launches]()


def pytest_configure(config):
    if not config.getoption("--gpusim"):
        return
    launches = Launches(check=not config.getoption("--gpusim-unchecked"),
                        schedule=parse_schedule(config.getoption("--gpusim-schedule")))
    stack = ExitStack()
    for patch in launches.patches():
        stack.enter_context(patch)
    config.stash[LAUNCHES] = launches
    config.add_cleanup(stack.close)


def pytest_report_header(config):
    if config.getoption("--gpusim"):
        return "gpusim: every Numba CUDA kernel launch runs under gpusim"
    return None


def pytest_terminal_summary(terminalreporter, config):
    launches = config.stash.get(LAUNCHES, None)
    if launches is None or not launches.totals:
        return
    terminalreporter.section("gpusim: kernel launches and counters")
    terminalreporter.write_line(f"{'kernel':32} {'launches':>8} " + " ".join(f"{n:>14}" for n in COUNTERS))
    for name, (count, counters) in sorted(launches.totals.items()):
        values = " ".join(f"{'-' if counters.get(n) is None else counters[n]:>14}" for n in COUNTERS)
        terminalreporter.write_line(f"{name[:32]:32} {count:>8} {values}")

