"""Run one numba-cuda test module under Numba's simulator with every kernel launch also run under gpusim.

    NUMBA_ENABLE_CUDASIM=1 python -m bench.numba_suite.child MODULE OUT.jsonl [--modes checked,unchecked]

Each launch gives one JSON line: the test, the kernel, the launch, gpusim's result in each mode and the
reference's. Tests the simulator skips (`skip_on_cudasim`) run anyway, with each launch's arguments taking
gpusim's checked results in place of the simulator's, so that the test's own assertions judge them; their
launches say `"reference": "assertions"` (see Recorder for tests that fail). The tests are used as installed;
nothing of them is copied.
"""

import argparse
import json
import os
import sys
import threading
import time
import traceback
import types
import unittest
import warnings

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    sys.exit("run with NUMBA_ENABLE_CUDASIM=1: the simulator is chosen when numba is first imported")

SIM_SKIP = "__gpusim_sim_skip__"


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


def _mark_instead_of_skip(reason):
    """skip_on_cudasim(reason), which the suite's tests use, marks the test (or class) instead of skipping
    it."""

    def mark(obj):
        setattr(obj, SIM_SKIP, reason)
        return obj

    return mark


def _sim_skip_reason(test):
    method = getattr(test, getattr(test, "_testMethodName", ""), None)
    return getattr(method, SIM_SKIP, None) or getattr(type(test), SIM_SKIP, None)


def _kernel_name(fn):
    code = fn.__code__
    return f"{fn.__module__}.{fn.__qualname__}:{code.co_firstlineno}"


class Recorder(unittest.TestResult):
    """Runs the tests, knows which one is running, and writes each test's launches with its outcome.

    A test runs first against the simulator (its launches continue with the simulator's results), or, where
    the
    simulator skips it, against its own assertions (they continue with gpusim's checked results). A test that
    fails is run again the other way; the launches written are those of a run that passed, else those of the
    simulator's run, whose launches are compared bit for bit.
    """

    def __init__(self, out, modes):
        super().__init__()
        self.out = out
        self.modes = modes
        self.test = None
        self.reference = "simulator"
        self.forced = None  # the reference of a second run
        self.launches = []
        self.lock = threading.Lock()  # gpusim runs one launch at a time per process

    # --- tests ---------------------------------------------------------------------------

    def startTest(self, test):
        super().startTest(test)
        if self.forced is None:
            self.test = test.id()
            self.reference = "assertions" if _sim_skip_reason(test) else "simulator"
            self.started = time.perf_counter()
        else:
            self.reference = self.forced
        self.launches = []
        self.outcome = None
        self.detail = ""

    def _outcome(self, outcome, detail=""):
        if self.outcome is None:
            self.outcome, self.detail = outcome, detail

    def stopTest(self, test):
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
        passed = [reference for reference, run in runs.items() if run[1] in ("passed", "expected failure")]
        chosen = passed[0] if passed else ("simulator" if "simulator" in runs else next(iter(runs)))
        launches, outcome, detail = runs[chosen]
        outcomes = {reference: run[1] for reference, run in runs.items()}
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

    def addError(self, test, err):
        super().addError(test, err)
        self._outcome("error", _last_line(err))

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
        if err is not None and not self.detail:
            self.detail = _last_line(err)

    # --- launches ------------------------------------------------------------------------

    def launch(self, kernel, args, run_simulator):
        """One launch: gpusim on clones of the arguments in every mode, then the reference."""
        from .launches import copy_outputs, differences, error_record, outputs, run_gpusim

        config = (kernel.grid_dim, kernel.block_dim, kernel.stream, kernel.dynshared_size)
        record = {"test": self.test, "kernel": _kernel_name(kernel.fn), "grid": list(kernel.grid_dim),
                  "block": list(kernel.block_dim), "shared": kernel.dynshared_size,
                  "reference": self.reference, "debug": bool(getattr(kernel, "_debug", False))}
        results = {}
        with self.lock:
            for mode in self.modes:
                result, cloned = run_gpusim(kernel, config, args, check=mode == "checked")
                results[mode] = (result, cloned)
                record[mode] = {k: v for k, v in result.items() if k != "exception"}
        self.launches.append(record)
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
    parser.add_argument("module")
    parser.add_argument("out")
    parser.add_argument("--modes", default="checked,unchecked")
    options = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    _stub_filecheck()
    from numba.cuda import testing

    testing.skip_on_cudasim = _mark_instead_of_skip
    with open(options.out, "a") as out:
        recorder = Recorder(out, options.modes.split(","))
        _install(recorder)
        unittest.defaultTestLoader.loadTestsFromName(options.module).run(recorder)
        out.write(json.dumps({"module_done": options.module}) + "\n")


if __name__ == "__main__":
    main()
