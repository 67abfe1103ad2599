"""The one import a course notebook needs: ``from utils import *``.

Importing it picks where kernels run, before numba is first imported:

* ``gpu``: Numba compiles kernels for a usable NVIDIA GPU;
* ``cpu``: Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) and our own ``gpusim``.

The choice is automatic (a GPU if the CUDA driver finds one); ``COURSE_MODE=cpu`` or ``COURSE_MODE=gpu``
forces it. One line says which mode and device are in use. The rest are the small helpers every lesson uses;
anything larger lives in ``gpusim``.
"""

import ctypes
import ctypes.util
import importlib.util
import os
import platform
import sys
import time
from collections import namedtuple

MODE_VARIABLE = "COURSE_MODE"
COURSE_ROOT = os.path.dirname(os.path.abspath(__file__))
if COURSE_ROOT not in sys.path:  # lessons import course.* (checks, kernels) and bench.* (recorded results)
    sys.path.append(COURSE_ROOT)


def _cuda_device_count() -> int:
    """How many GPUs the CUDA driver reports, asked without importing numba (0 when there is no driver)."""
    name = ctypes.util.find_library("cuda") or "libcuda.so.1"
    try:
        driver = ctypes.CDLL(name)
        count = ctypes.c_int(0)
        if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    except (OSError, AttributeError):
        return 0


def _choose_mode() -> str:
    """Decide the mode and set NUMBA_ENABLE_CUDASIM accordingly, refusing to switch an imported numba."""
    requested = os.environ.get(MODE_VARIABLE, "auto").strip().lower()
    if requested not in ("auto", "cpu", "gpu"):
        raise ValueError(f"{MODE_VARIABLE}={requested!r}: use 'cpu', 'gpu', or leave it unset for automatic.")
    if requested == "auto":
        simulated_already = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
        requested = "cpu" if simulated_already or _cuda_device_count() == 0 else "gpu"
    elif requested == "gpu" and _cuda_device_count() == 0:
        raise RuntimeError(f"{MODE_VARIABLE}=gpu, but the CUDA driver finds no GPU here. "
                           "Unset it to simulate on the CPU.")
    wanted = "1" if requested == "cpu" else "0"
    if "numba" in sys.modules and os.environ.get("NUMBA_ENABLE_CUDASIM", "0") != wanted:
        raise RuntimeError(
            "numba was imported before utils, in the other mode. Restart the kernel and run "
            "`from utils import *` first: NUMBA_ENABLE_CUDASIM only counts before numba's first import."
        )
    os.environ["NUMBA_ENABLE_CUDASIM"] = wanted
    return requested


def _imported_on_first_use(name: str):
    """The module ``name``, loaded only when one of its attributes is first used (importlib's LazyLoader):
    PyTorch and the pictures take seconds to import, and most cells, and every graded exercise, never need
    them. An already imported module is returned as it is."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


MODE = _choose_mode()
ON_GPU = MODE == "gpu"

import numpy as np  # noqa: E402  (numba must come after the mode is chosen)
from numba import cuda  # noqa: E402

import gpusim  # noqa: E402
from course.tasks.common import try_it  # noqa: E402

torch = _imported_on_first_use("torch")
viz = _imported_on_first_use("gpusim.viz")


def device_name() -> str:
    """The GPU's name in GPU mode, else the CPU's."""
    if ON_GPU:
        name = cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else name
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def _announce() -> None:
    if ON_GPU:
        print(f"utils: GPU mode: Numba kernels run on {device_name()}.")
    else:
        print(
            f"utils: CPU mode: kernels run under Numba's simulator and gpusim on this CPU ({device_name()}). "
            f"Set {MODE_VARIABLE}=gpu on a machine with an NVIDIA GPU."
        )


dim3 = namedtuple("dim3", ["x", "y", "z"], defaults=(1, 1))
dim3.__doc__ = "Block or grid dimensions, as in CUDA: y and z default to 1."


def cdiv(a: int, b: int) -> int:
    """Ceiling division: how many blocks of size b cover a elements."""
    return (a + b - 1) // b


def random_array(*shape: int, seed: int = 0, dtype=np.float32, low: float = -1.0, high: float = 1.0):
    """A reproducible array of uniform random numbers in [low, high)."""
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def assert_close(actual, expected, rtol: float = 1e-5, atol: float = 1e-6, name: str = "result") -> None:
    """Raise AssertionError naming the first wrong elements when actual differs from expected."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError(f"{name}: shape {actual.shape}, expected {expected.shape}.")
    wrong = ~np.isclose(actual, expected, rtol=rtol, atol=atol)
    if wrong.any():
        where = np.argwhere(wrong)[:5]
        shown = ", ".join(f"{tuple(int(i) for i in w)}: got {actual[tuple(w)]}, expected {expected[tuple(w)]}"
                          for w in where)
        raise AssertionError(
            f"{name}: {int(wrong.sum())} of {wrong.size} elements differ (rtol={rtol}, atol={atol}). "
            f"First: {shown}."
        )


def synchronize() -> None:
    """Wait for the GPU to finish queued work (a no-op in CPU mode)."""
    if ON_GPU:
        cuda.synchronize()


def benchmark(fn, *args, warmup: int = 1, repeat: int = 5) -> float:
    """Median wall time of fn(*args) in seconds, after warm-up, synchronising the GPU around each call."""
    for _ in range(warmup):
        fn(*args)
    synchronize()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        synchronize()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


__all__ = [
    "MODE", "ON_GPU", "np", "torch", "cuda", "gpusim", "viz", "device_name", "dim3", "cdiv",
    "random_array", "assert_close", "synchronize", "benchmark", "try_it",
]

_announce()
if os.environ.get("COURSE_LAUNCH_LOG"):  # the lessons' tests: record every kernel launched, for its PTX
    from course import launchlog

    launchlog.install(os.environ["COURSE_LAUNCH_LOG"])
