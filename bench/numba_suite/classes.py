"""Sort launch records (bench.numba_suite.child) into result classes, per gpusim mode.

same           gpusim's outputs are the reference's, bit for bit (or both raise the kernel's own exception;
or,
               judged by assertions, the test passes with gpusim's results)
refused        gpusim says it does not support a feature the kernel uses (`feature` names it); a launch that
               fails inside gpusim without naming one is refused as "unnamed: <error>" (a crash to fix)
false alarm    gpusim reports a race, barrier, bounds or resource error where the kernel is correct
fidelity       gpusim gives other results than the reference, or raises where it does not (or not where it
does)
real bug       gpusim's error is right: the test's kernel has the bug it names (KNOWN_BUGS says why)
skipped        no reference to judge by: the simulator cannot run the launch, and the test fails with gpusim's
               results too
"""

import re

CLASSES = ("same", "refused", "false alarm", "fidelity", "real bug", "skipped")
CHECK_ERRORS = ("RaceError", "WriteConflictError", "FlagRaceError", "BarrierError", "DeadlockError",
                "OutOfBoundsError", "UninitializedReadError", "ResourceError")

# Kernels of numba-cuda's tests in which gpusim finds a real bug: module.qualname -> why it is one.
KNOWN_BUGS = {}


def kernel_key(record):
    """module.qualname of the launched kernel, without its line."""
    return record["kernel"].rsplit(":", 1)[0]


def _refusal(result):
    feature = result.get("feature")
    if feature:
        return feature
    cause = f" ({result['cause']})" if result.get("cause") else ""
    return f"unnamed: {result['error']}{cause}"


def _gpusim_error_class(record, result):
    """The class of a launch that gpusim refused or reported an error for, where the reference ran."""
    if result.get("feature"):
        return "refused", result["feature"]
    if result["error"] in CHECK_ERRORS:
        key = kernel_key(record)
        if key in KNOWN_BUGS:
            return "real bug", KNOWN_BUGS[key]
        return "false alarm", f"{result['error']}: {_first_line(result['message'])}"
    return "refused", _refusal(result)


def _first_line(text):
    return re.sub(r"\s+", " ", text.splitlines()[0] if text else "")[:300]


def classify(record, mode):
    """(class, detail) of one launch in one gpusim mode ("checked" or "unchecked")."""
    result = record[mode]
    passed = record.get("test_outcome") in ("passed", "expected failure")
    if record["reference"] == "assertions":  # the test passed with gpusim's checked results
        if result["ok"]:
            if mode == "checked":
                return "same", ""
            diff = result.get("difference_from_checked", "")
            return ("same", "") if diff == "" else ("fidelity", f"differs from checked: {diff}")
        if result.get("cause") and mode == "checked":
            return "same", ""  # the kernel raised what the test expects
        return _gpusim_error_class(record, result)
    simulator = record.get("simulator")
    if simulator is None:
        return "skipped", "the simulator did not run it (an earlier launch of the test failed)"
    if simulator["ok"]:
        if result["ok"]:
            diff = result.get("difference", "")
            return ("same", "") if diff == "" else ("fidelity", diff)
        return _gpusim_error_class(record, result)
    if not passed:
        return "skipped", (f"the simulator cannot run it ({simulator['error']}: "
                           f"{_first_line(simulator['message'])}) and the test fails with gpusim's results")
    # The test expects the launch to raise, and the simulator does.
    if not result["ok"] and result.get("cause") == simulator["error"]:
        return "same", ""
    if result["ok"]:
        return "fidelity", f"the simulator raises {simulator['error']} and gpusim does not"
    if result.get("feature"):
        return "refused", result["feature"]
    return "fidelity", f"the simulator raises {simulator['error']}, gpusim {result['error']}"
