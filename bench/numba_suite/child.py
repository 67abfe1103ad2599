"""Run numba-cuda tests under Numba's simulator with every kernel launch also run under gpusim.

    NUMBA_ENABLE_CUDASIM=1 python -m bench.numba_suite.child OUT.jsonl NAME [NAME ...] [--modes checked]

NAME is a test module, class or method (numba.cuda.tests.cudapy.test_atomics...); --modes defaults to
checked,unchecked.

Each launch gives one JSON line: the test, the kernel, the launch, gpusim's result in each mode and the
reference's. Tests the simulator skips (`skip_on_cudasim`) run anyway, with each launch's arguments taking
gpusim's checked results in place of the simulator's, so that the test's own assertions judge them; their
launches say `"reference": "assertions"` (see Recorder for tests that fail). The tests are used as installed;
nothing of them is copied.
"""

import argparse
import inspect
import json
import os
import signal
import sys
import threading
import time
import traceback
import types
import unittest
import warnings

import numpy as np

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    sys.exit("run with NUMBA_ENABLE_CUDASIM=1: the simulator is chosen when numba is first imported")

SIM_SKIP = "__gpusim_sim_skip__"
SIM_ONLY = "__gpusim_sim_only__"
TEST_TIME_LIMIT_S = {"first": 300, "again": 120}  # a test's first run; its second, the other way


class TestTimeLimit(BaseException):
    """A test ran past its time limit (a BaseException, so that no kernel or test code catches it)."""


def _time_limit(signum, frame):
    raise TestTimeLimit("the test ran past the harness's time limit")


def _stub_filecheck():
    """numba.cuda.testing imports `filecheck` (for tests that match compiled assembly, which the simulator
    cannot give): empty stand-ins let it import when the package is not installed."""
    try:
        import filecheck  # noqa: F401
        return
    except ImportError:
        pass
    for name in ("filecheck", *(f"filecheck.{part}" for part in ("matcher", "options", "parser", "finput"))):
        module = types.ModuleType(name)
        for attr in ("Matcher", "Options", "Parser", "pattern_for_opts", "FInput"):
            setattr(module, attr, None)
        sys.modules[name] = module


def _complete_simulator():
    """Give the simulator what numba-cuda's dispatchers have and it lacks, so that gpusim sees the kernels as
    it would see numba-cuda's: the cache-hint loads and stores (None in the simulator's `cuda`, so a test
    that captures `cuda.ldca` outside a kernel would capture None) become numba-cuda's own functions, and a
    kernel compiled with a signature keeps its argument types (`signatures`) as numba-cuda's dispatcher
    keeps them. `cuda.declare_device` declares a function whose NumPy model gpusim runs (linked_models), and
    `link=` is dropped: nothing is linked."""
    from numba import cuda
    from numba.cuda import cache_hints, types
    from numba.cuda.core import sigutils
    from numba.cuda.simulator import api
    from numba.cuda.typing import signature

    from . import linked_models

    for name in ("ldca", "ldcg", "ldcs", "ldlu", "ldcv", "stcg", "stcs", "stwb", "stwt"):
        if getattr(cuda, name, None) is None:
            setattr(cuda, name, getattr(cache_hints, name))
    cuda.declare_device = api.declare_device = linked_models.declare_device
    simulator_jit = api.jit

    def jit(func_or_sig=None, *args, **kwargs):
        kwargs.pop("link", None)  # the linked code is modelled (linked_models), not linked
        made = simulator_jit(func_or_sig, *args, **kwargs)
        signatures = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
        if func_or_sig is None or not all(map(sigutils.is_signature, signatures)):
            return made

        def decorate(fn):
            kernel = made(fn)
            parsed = [sigutils.normalize_signature(sig) for sig in signatures]
            kernel.signatures = [tuple(args) for args, _ in parsed]
            kernel.nopython_signatures = [signature(restype or types.none, *args) for args, restype in parsed]
            kernel._can_compile = False
            return kernel

        return decorate

    cuda.jit = api.jit = jit


def _mark_instead_of_skip(reason):
    """skip_on_cudasim(reason), which the suite's tests use, marks the test (or class) instead of skipping
    it."""

    def mark(obj):
        setattr(obj, SIM_SKIP, reason)
        return obj

    return mark


def _mark_simulator_only(reason):
    """skip_unless_cudasim(reason): a test of the simulator itself, which runs (and is marked as such)."""

    def mark(obj):
        setattr(obj, SIM_ONLY, reason)
        return obj

    return mark


def _marked(test, mark):
    method = getattr(test, getattr(test, "_testMethodName", ""), None)
    return getattr(method, mark, None) or getattr(type(test), mark, None)


def _source(fn):
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def _kernel_name(fn):
    code = fn.__code__
    return f"{fn.__module__}.{fn.__qualname__}:{code.co_firstlineno}"


class Recorder(unittest.TestResult):
    """Runs the tests, knows which one is running, and writes each test's launches with its outcome.

    A test runs first against the simulator (its launches continue with the simulator's results), or, where
    the simulator skips it, against its own assertions (they continue with gpusim's checked results). A test
    that fails is run again the other way. The launches written are those of a run that passed; when both
    fail, those of the assertions' run, each with the simulator's result for it from the other run and with
    the outcome of the first assertion of the test that ran after it (`judged`).
    """

    def __init__(self, out, modes, show_failures=False):
        super().__init__()
        self.out = out
        self.modes = modes
        self.show_failures = show_failures  # print each failing run's traceback (to look into one test)
        self.test = None
        self.reference = "simulator"
        self.forced = None  # the reference of a second run
        self.launches = []
        self.unjudged = []  # launches of this run that no assertion has followed yet
        self.asserting = 0  # depth of assertion calls under way (an assertion may call others)
        self.lock = threading.Lock()  # gpusim runs one launch at a time per process

    # --- tests ---------------------------------------------------------------------------

    def startTest(self, test):
        super().startTest(test)
        if self.forced is None:
            self.test = test.id()
            self.reference = "assertions" if _marked(test, SIM_SKIP) else "simulator"
            self.simulator_only = bool(_marked(test, SIM_ONLY))
            self.started = time.perf_counter()
        else:
            self.reference = self.forced
        self.launches = []
        self.unjudged = []
        self.outcome = None
        self.detail = ""
        limit = TEST_TIME_LIMIT_S["first" if self.forced is None else "again"]
        signal.signal(signal.SIGALRM, _time_limit)
        signal.setitimer(signal.ITIMER_REAL, limit)

    def _outcome(self, outcome, detail=""):
        if self.outcome is None:
            self.outcome, self.detail = outcome, detail

    def assertion(self, passed):
        """The outermost of the test's assertion calls ended: it judges the launches since the last one."""
        for launch in self.unjudged:
            launch["judged"] = "passed" if passed else "failed"
        self.unjudged = []

    def stopTest(self, test):
        signal.setitimer(signal.ITIMER_REAL, 0)
        super().stopTest(test)
        if self.outcome is None:  # a test whose subtests failed reports no outcome of its own
            self.outcome = "failed"
        if self.forced is not None:
            return
        runs = {self.reference: (self.launches, self.outcome, self.detail)}
        if self.outcome in ("failed", "error"):
            self.forced = "simulator" if self.reference == "assertions" else "assertions"
            try:
                test.run(self)
            finally:
                self.forced = None
            runs[self.reference] = (self.launches, self.outcome, self.detail)
        self._write(runs)

    def _write(self, runs):
        outcomes = {reference: run[1] for reference, run in runs.items()}
        passed = [reference for reference, outcome in outcomes.items()
                  if outcome in ("passed", "expected failure")]
        if passed or len(runs) == 1:
            launches, outcome, detail = runs[passed[0] if passed else next(iter(runs))]
        else:
            launches, outcome, detail = _merged(runs["assertions"], runs["simulator"])
        for launch in launches:
            launch.update(test_outcome=outcome, test_detail=detail, runs=outcomes)
            self.out.write(json.dumps(launch) + "\n")
        self.out.write(json.dumps({"test": self.test, "outcome": outcome, "detail": detail, "runs": outcomes,
                                   "launches": len(launches),
                                   "seconds": time.perf_counter() - self.started}) + "\n")
        self.out.flush()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._outcome("passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._outcome("failed", _last_line(err))
        self._show(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._outcome("error", _last_line(err))
        self._show(test, err)

    def _show(self, test, err):
        if self.show_failures:
            print(f"--- {test.id()} ({self.reference})", file=sys.stderr)
            traceback.print_exception(*err, file=sys.stderr)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._outcome("skipped", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._outcome("expected failure", _last_line(err))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._outcome("unexpected success")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.detail = self.detail or _last_line(err)
            self._show(subtest, err)

    # --- launches ------------------------------------------------------------------------

    def launch(self, kernel, args, run_simulator):
        """One launch: gpusim on clones of the arguments in every mode, then the reference."""
        from .launches import copy_outputs, differences, error_record, outputs, run_gpusim

        config = (kernel.grid_dim, kernel.block_dim, kernel.stream, kernel.dynshared_size)
        record = {"test": self.test, "kernel": _kernel_name(kernel.fn), "grid": list(kernel.grid_dim),
                  "block": list(kernel.block_dim), "shared": kernel.dynshared_size,
                  "reference": self.reference, "debug": bool(getattr(kernel, "_debug", False)),
                  "stores_address": ".ctypes" in _source(kernel.fn), "simulator_only": self.simulator_only}
        results = {}
        with self.lock:
            for mode in self.modes:
                result, cloned = run_gpusim(kernel, config, args, check=mode == "checked")
                results[mode] = (result, cloned)
                record[mode] = {k: v for k, v in result.items() if k != "exception"}
        self.launches.append(record)
        self.unjudged.append(record)
        if self.reference == "assertions":
            return self._judged_by_assertions(record, results, args, copy_outputs, differences, outputs)
        start = time.perf_counter()
        try:
            run_simulator()
        except BaseException as error:
            record["simulator"] = {"ok": False, "seconds": time.perf_counter() - start, **error_record(error)}
            raise
        record["simulator"] = {"ok": True, "seconds": time.perf_counter() - start}
        expected = outputs(args)
        for mode, (result, cloned) in results.items():
            if result["ok"]:
                record[mode]["difference"] = differences(expected, outputs(cloned))
        return None

    def _judged_by_assertions(self, record, results, args, copy_outputs, differences, outputs):
        """A test the simulator skips: the launch gives gpusim's checked results (or its error) to the
        test."""
        first = "checked" if "checked" in results else self.modes[0]
        result, cloned = results[first]
        for mode, (other, other_cloned) in results.items():
            if mode != first and other["ok"] and result["ok"]:
                record[mode]["difference_from_checked"] = differences(outputs(cloned), outputs(other_cloned))
        if not result["ok"]:
            raise _as_gpu_raises(result["exception"])
        copy_outputs(cloned, args)
        return None


def _merged(assertions_run, simulator_run):
    """A test that failed both ways: the launches of the assertions' run, each with what the simulator's run
    says of the same launch (matched by position when both runs launched the same kernels)."""
    launches, outcome, detail = assertions_run
    others = simulator_run[0]
    if [a["kernel"] for a in launches] != [b["kernel"] for b in others]:
        others = [{} for _ in launches]
    for launch, other in zip(launches, others, strict=True):
        launch["reference"] = "both failed"
        if "simulator" in other:
            launch["simulator"] = other["simulator"]
            launch["simulator_judged"] = other.get("judged")
            for mode, result in other.items():
                if isinstance(result, dict) and "difference" in result:
                    launch[mode]["difference"] = result["difference"]
    return launches, outcome, detail


def _watch_assertions(recorder):
    """Make every assertion of the tests (unittest's and the suite's assert* methods, numpy.testing's
    assert_* functions) tell the recorder whether it passed."""
    from numba.cuda.tests.support import TestCase

    def watched(function):
        if getattr(function, "__gpusim_watched__", False):
            return function

        def assertion(*args, **kwargs):
            recorder.asserting += 1
            try:
                result = function(*args, **kwargs)
            except AssertionError:
                recorder.asserting -= 1
                if not recorder.asserting:
                    recorder.assertion(False)
                raise
            except BaseException:
                recorder.asserting -= 1
                raise
            recorder.asserting -= 1
            if not recorder.asserting:
                recorder.assertion(True)
            return result

        assertion.__gpusim_watched__ = True
        return assertion

    def watched_raises(function):
        """assertRaises(...): called with the code to run, it judges at once; as a context manager, when
        the block ends."""

        def assertion(*args, **kwargs):
            recorder.asserting += 1
            try:
                context = function(*args, **kwargs)
            except AssertionError:
                recorder.asserting -= 1
                recorder.assertion(False)
                raise
            except BaseException:
                recorder.asserting -= 1
                raise
            recorder.asserting -= 1
            if not hasattr(context, "__exit__"):
                recorder.assertion(True)
                return context
            return _JudgedContext(context, recorder)

        return assertion

    raising = {"assertRaises", "assertRaisesRegex"}
    unwatched = {"assertWarns", "assertWarnsRegex", "assertLogs", "assertNoLogs"}
    for cls in (unittest.TestCase, TestCase):
        for name, value in list(vars(cls).items()):
            if name.startswith("assert") and callable(value) and name not in unwatched:
                setattr(cls, name, watched_raises(value) if name in raising else watched(value))
    for name in dir(np.testing):
        if name.startswith("assert_"):
            setattr(np.testing, name, watched(getattr(np.testing, name)))


class _JudgedContext:
    """An assertRaises context manager that tells the recorder whether the expected exception came."""

    def __init__(self, context, recorder):
        self.context = context
        self.recorder = recorder

    def __enter__(self):
        return self.context.__enter__()

    def __exit__(self, *exc_info):
        try:
            handled = self.context.__exit__(*exc_info)
        except AssertionError:
            self.recorder.assertion(False)
            raise
        if handled or exc_info[0] is None:
            self.recorder.assertion(True)
        return handled


def _as_gpu_raises(error):
    """An exception raised by kernel code reaches the caller as its own type, as on a GPU (debug=True) and in
    the simulator; gpusim's other errors as they are."""
    import gpusim

    cause = error.__cause__
    if isinstance(error, gpusim.KernelException) and cause is not None:
        try:
            return type(cause)(f"{error.detail}")
        except Exception:  # noqa: BLE001 -- an exception class that takes other arguments
            return cause
    return error


def _last_line(err):
    lines = "".join(traceback.format_exception_only(err[0], err[1])).strip().splitlines()
    return lines[-1][:400] if lines else ""


def _install(recorder):
    """Route every kernel launch of the simulator through `recorder.launch`."""
    from numba.cuda.simulator import kernel as sim_kernel

    original = sim_kernel.FakeCUDAKernel.__call__

    def launch(self, *args):
        if self._device or sim_kernel._get_kernel_context() is not None:
            return original(self, *args)
        return recorder.launch(self, args, lambda: original(self, *args))

    sim_kernel.FakeCUDAKernel.__call__ = launch


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("names", nargs="+", help="test modules, classes or methods (dotted names)")
    parser.add_argument("--modes", default="checked,unchecked")
    parser.add_argument("--show-failures", action="store_true", help="print each failing run's traceback")
    options = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    _stub_filecheck()
    from numba.cuda import testing

    testing.skip_on_cudasim = _mark_instead_of_skip
    testing.skip_unless_cudasim = _mark_simulator_only
    _complete_simulator()
    with open(options.out, "a") as out:
        recorder = Recorder(out, options.modes.split(","), options.show_failures)
        _install(recorder)
        _watch_assertions(recorder)
        suite = unittest.TestSuite()
        for name in options.names:
            try:
                suite.addTests(unittest.defaultTestLoader.loadTestsFromName(name))
            except BaseException as skip:  # a module that skips itself (SkipTest, pytest's importorskip)
                if type(skip).__name__ not in ("SkipTest", "Skipped"):
                    raise
                out.write(json.dumps({"module_skipped": name, "reason": str(skip)}) + "\n")
        suite.run(recorder)
        out.write(json.dumps({"done": options.names}) + "\n")


if __name__ == "__main__":
    main()
