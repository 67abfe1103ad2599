"""Test settings: everything runs in CPU mode, with the simulator chosen before numba is imported."""

import os

os.environ["COURSE_MODE"] = "cpu"
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.setdefault("MPLBACKEND", "Agg")

from notebook_runs import RUN_TIMES  # noqa: E402


def pytest_terminal_summary(terminalreporter):
    """Print how long each notebook took, slowest first, so slow cells are visible."""
    if not RUN_TIMES:
        return
    terminalreporter.section("notebook run times (CPU mode)")
    for name, seconds in sorted(RUN_TIMES.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{seconds:7.1f} s  {name}")
