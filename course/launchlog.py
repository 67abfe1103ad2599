"""Record the kernels a notebook launches, as the compile gate would see them: each kernel's spec
(:mod:`course.kernelsource`) and its argument types, once per kernel and signature.

Switched on by the environment variable ``COURSE_LAUNCH_LOG=<file>`` before ``from utils import *``; each
new kernel and signature appends one JSON line to the file. It follows launches by Numba's simulator and by
``gpusim.jit``, and the kernels the exercise checks hand to the compile gate; ``tests/test_lessons.py``
compiles what a lesson recorded (:mod:`course.ptx`) and checks that the lesson's kernels compute in float32.
"""

from __future__ import annotations

import json
import threading

from gpusim import python_function

from .compilegate import signature_of
from .kernelsource import describe

_lock = threading.Lock()
REBUILT = "gpusim_rebuilt_kernel"  # the module name course.kernelsource.rebuild gives a rebuilt kernel


def install(path) -> None:
    """Append a line to `path` for every kernel and argument types launched from now on in this process."""
    import gpusim

    seen = set()

    def write(key, entry):
        with _lock:
            if key in seen:
                return
            seen.add(key)
            with open(path, "a") as log:
                log.write(json.dumps(entry) + "\n")

    def record(kernel, args):
        try:
            function, signature = python_function(kernel), signature_of(args)
        except Exception:  # noqa: BLE001 -- not a kernel the gate could check (a generator, odd arguments)
            return
        if function.__globals__.get("__name__") == REBUILT:
            return  # an exercise check's rebuilt kernel: recorded by `gate`, as the compile gate saw it
        entry = {"name": function.__name__, "filename": function.__code__.co_filename,
                 "line": function.__code__.co_firstlineno, "signature": signature}
        try:
            entry["spec"] = describe(kernel)
        except Exception as error:  # noqa: BLE001 -- say why it could not be described, and go on
            entry["error"] = f"{type(error).__name__}: {error}"
        write((id(function), json.dumps(signature)), entry)

    def gate(spec, signature):
        write(json.dumps([spec, signature], sort_keys=True),
              {"name": spec.get("name"), "filename": spec.get("filename"), "line": spec.get("firstline"),
               "signature": signature, "spec": spec})
        return compile_kernel(spec, signature)

    from course import compilegate

    compile_kernel = compilegate.compile_kernel
    compilegate.compile_kernel = gate
    launch = gpusim.Kernel._launch

    def gpusim_launch(self, grid, block, shared_bytes, args):
        record(self.py_func, args)
        return launch(self, grid, block, shared_bytes, args)

    gpusim.Kernel._launch = gpusim_launch
    from numba.cuda.core import config

    if config.ENABLE_CUDASIM:
        from numba.cuda.simulator import kernel as simulator

        call = simulator.FakeCUDAKernel.__call__

        def simulator_call(self, *args):
            if not self._device:
                record(self, args)
            return call(self, *args)

        simulator.FakeCUDAKernel.__call__ = simulator_call


def read(path) -> list[dict]:
    """The entries a run recorded in `path` (none if it recorded nothing)."""
    try:
        with open(path) as log:
            return [json.loads(line) for line in log if line.strip()]
    except FileNotFoundError:
        return []
