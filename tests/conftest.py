"""Test settings: everything runs in CPU mode, with the simulator chosen before numba is imported."""

import os

os.environ["COURSE_MODE"] = "cpu"
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_terminal_summary(terminalreporter):
    """Print how long each notebook took, slowest first, so slow cells are visible (works under xdist)."""
    times = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", []):
                if key == "notebook_seconds":
                    times[report.nodeid.split("[", 1)[-1].rstrip("]")] = value
    if times:
        terminalreporter.section("notebook run times (CPU mode)")
        for name, seconds in sorted(times.items(), key=lambda item: -item[1]):
            terminalreporter.write_line(f"{seconds:7.1f} s  {name}")
