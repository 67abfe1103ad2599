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
# Exceptions a GPU and the simulator raise differently for the same kernel: numba-cuda's own test
# (test_exception.test_zero_division_error_in_debug) says a kernel compiled with debug=True raises
# ZeroDivisionError on a GPU, and FloatingPointError in the simulator. gpusim raises the GPU's.
SAME_EXCEPTIONS = {("ZeroDivisionError", "FloatingPointError")}
# Tests in which Numba's simulator computes otherwise than numba-cuda's compiled code, so that a difference
# from the simulator is no reference (the test's own check accepts both results).
SIMULATOR_IS_NOT_THE_GPU = {
    "numba.cuda.tests.cudapy.test_intrinsics.TestCudaIntrinsic.test_round_to_f8": (
        "round(x, ndigits) in the simulator is CPython's correctly rounded one; numba-cuda compiles "
        "CPython's fallback algorithm (cudaimpl.round_to_impl), as gpusim computes it, and the test accepts "
        "both (prec='double')"),
}
CHECK_ERRORS = ("RaceError", "WriteConflictError", "FlagRaceError", "BarrierError", "DeadlockError",
                "OutOfBoundsError", "UninitializedReadError", "ResourceError")

# Kernels of numba-cuda's tests in which gpusim finds a real bug: module.qualname -> why it is one.
_TESTS = "numba.cuda.tests.cudapy."
_UNWRITTEN = ("reads shared memory ({}) that no thread wrote: undefined values on a GPU (the test checks "
              "only that the kernel compiles and runs)")
_WARP_DIVERGE = "test_exception.TestException.case_raise_causing_warp_diverge.<locals>"
KNOWN_BUGS = {
    f"{_TESTS}{_WARP_DIVERGE}.problematic": (
        "threads 13 to 31 each update every y[i] (y[i] += x[i] // y[i]) with no atomic: read-modify-writes "
        "of one element by 19 threads race"),
    f"{_TESTS}{_WARP_DIVERGE}.oracle": "the same updates of every y[i] by threads 13 to 31, with no atomic",
    f"{_TESTS}test_freevar.TestFreeVar.test_freevar.<locals>.foo": _UNWRITTEN.format("sdata"),
    f"{_TESTS}test_sm.TestSharedMemoryIssue.test_issue_2393.<locals>.costs_func":
        _UNWRITTEN.format("s_features and s_initialcost"),
    f"{_TESTS}test_sm_creation.udt_global_constants": _UNWRITTEN.format("sa"),
    f"{_TESTS}test_sm_creation.udt_global_build_tuple": _UNWRITTEN.format("sa"),
    f"{_TESTS}test_sm_creation.udt_global_build_list": _UNWRITTEN.format("sa"),
    f"{_TESTS}test_sm_creation.udt_global_constant_tuple": _UNWRITTEN.format("sa"),
}


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
    if result["error"] == "KernelTimeoutError":
        return "refused", "a launch that outlasts the harness's timeout (launches.GPUSIM_TIMEOUT_S)"
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
    bug = KNOWN_BUGS.get(kernel_key(record))
    if bug is not None:  # checked, gpusim reports it; unchecked, its undefined result is no reference
        return "real bug", bug
    if 0 in record["grid"]:
        return "skipped", "a grid of no blocks: numba-cuda's forall(0) launches nothing, and CUDA refuses it"
    if record.get("simulator_only"):
        return "skipped", "a test of the simulator itself (skip_unless_cudasim)"
    result = record[mode]
    if record.get("test_outcome") == "expected failure" and (result["ok"] or result["gpusim_error"]):
        return "skipped", "a test numba-cuda expects to fail (a kernel its compiler rejects, or a known bug)"
    if record["reference"] == "assertions":  # the test passed with gpusim's checked results
        if result["ok"]:
            return _same_as_checked(result, mode)
        checked = record["checked"]
        expected = result["gpusim_error"] and not result.get("feature") and \
            result["error"] not in CHECK_ERRORS
        if expected and (mode == "checked" or (not checked["ok"] and checked["error"] == result["error"]
                                               and checked.get("cause") == result.get("cause"))):
            return "same", ""  # it raised (the kernel's own exception, an argument error) as the test expects
        return _gpusim_error_class(record, result)
    if record.get("stores_address") and result["ok"]:
        return "skipped", "the kernel stores an array's address (ctypes.data), which differs from run to run"
    if record["reference"] == "simulator":  # the test passed with the simulator's results
        return _against_simulator(record, result)
    return _both_failed(record, result, mode)


def _same_as_checked(result, mode):
    if mode == "checked":
        return "same", ""
    diff = result.get("difference_from_checked", "")
    return ("same", "") if diff == "" else ("fidelity", f"differs from checked: {diff}")


def _against_simulator(record, result):
    simulator = record["simulator"] if "simulator" in record else None
    if simulator is None:
        return "skipped", "the simulator did not run it"
    if simulator["ok"]:
        if result["ok"]:
            diff = result.get("difference", "")
            if diff and record["test"] in SIMULATOR_IS_NOT_THE_GPU:
                return "skipped", SIMULATOR_IS_NOT_THE_GPU[record["test"]]
            return ("same", "") if diff == "" else ("fidelity", diff)
        return _gpusim_error_class(record, result)
    # The test passed while the simulator raised: the test expects the launch to raise.
    cause = result.get("cause")
    if not result["ok"] and (cause == simulator["error"] or (cause, simulator["error"]) in SAME_EXCEPTIONS):
        return "same", ""
    if result["ok"]:
        return "fidelity", f"the simulator raises {simulator['error']} and gpusim does not"
    if result.get("feature"):
        return "refused", result["feature"]
    return "fidelity", f"the simulator raises {simulator['error']}, gpusim {result['error']}"


def _both_failed(record, result, mode):
    """The test fails with gpusim's results and with the simulator's: the first assertion after the launch,
    or the simulator's result where the simulator ran it, decides."""
    simulator = record.get("simulator") or {}
    if not result["ok"]:
        if result.get("cause") and result["cause"] == simulator.get("error"):
            return "same", ""  # the kernel raises what it raises in the simulator
        expected = result["gpusim_error"] and not result.get("feature") and \
            result["error"] not in CHECK_ERRORS
        if expected and record.get("judged") == "passed":
            return "same", ""  # the test's next assertion expected the launch to raise this
        if result.get("cause") and "error" in simulator:
            return "refused", (f"a kernel that raises {result['cause']} where the simulator raises "
                               f"{simulator['error']}, and the test expects neither")
        return _gpusim_error_class(record, result)
    if mode != "checked" and record["checked"]["ok"] and result.get("difference_from_checked") == "":
        return classify(dict(record, unchecked=record["checked"]), "checked")
    if record.get("judged") == "passed":
        return "same", ""
    if simulator.get("ok") and result.get("difference") == "":
        return "same", ""
    if simulator.get("ok") and record.get("simulator_judged") == "passed":
        return "fidelity", result.get("difference", "")
    if record.get("judged") == "failed" and record.get("simulator_judged") != "failed":
        return "fidelity", f"the test's next assertion fails with gpusim's results ({record['test_detail']})"
    if record.get("judged") == "failed":
        return "skipped", "the test's next assertion fails with the simulator's results too"
    why = f"the simulator cannot run it ({simulator['error']})" if "error" in simulator else \
        "the simulator's result fails the test too" if simulator.get("ok") else "the simulator did not run it"
    return "skipped", f"{why}, and no assertion of the test checks gpusim's result"
