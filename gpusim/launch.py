"""`gpusim.jit`: wrap a kernel, parse `k[grid, block, stream, shared_bytes]`, convert arguments, run."""

import numbers
import os
import random
import signal
import threading
import time
from contextlib import contextmanager

import numpy as np

from .arguments import apply_extensions, convert_args, copy_back, declared_types, host_arrays
from .arrays import TAG_SHIFT, DeviceArray
from .checker import Checker
from .context import current
from .counters import Counters
from .errormodel import debug_of, error_state
from .errors import KernelError, KernelTimeoutError, ResourceError
from .fakecuda import Dim3, FakeCuda
from .frozen import snapshot
from .lanes import Bail
from .memory import Memory
from .rebind import Rebinder, python_function
from .report import Report
from .rewrite import rewrite
from .schedule import Priority, as_schedule
from .scheduler import Scheduler
from .sites import TAG
from .threadalarm import thread_alarm
from .vectorize import vector_code
from .wave import WAVE_LANES, VectorCuda, VectorLaunch, WaveTooLarge, bind

MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_SHARED_BYTES = 48 * 1024  # static + dynamic shared memory of a block, unless the kernel opts in
MAX_SHARED_BYTES_OPT_IN = 227 * 1024  # the most a block may opt in to (Hopper; Ampere A100: 163 KiB)
ENGINES = ("auto", "thread", "vector")
VECTOR_SHARE_OF_TIMEOUT = 0.25  # past this share of the timeout, the vector engine hands over to threads


def jit(kernel, check=True, schedule="sequential", seed=None, timeout=DEFAULT_TIMEOUT_S, record=False,
        max_dynamic_shared_bytes=None, engine=None, strict=False):
    """Wrap a @cuda.jit kernel (or a plain function using `cuda`) for simulation: jit(k)[grid, block](*args).

    check=False only runs (fast); schedule="random" (with seed=s, or ("random", s)) runs threads in a seeded
    random order, ("hold", w), ("ahead", w) and ("delay", w) run warp w last, first, or first but slow at its
    fences (gpusim.schedule; gpusim.schedules(block) lists the set checks run);
    timeout (seconds, 60 by default; None for none) stops a runaway launch with KernelTimeoutError;
    record=True (with check=True) keeps every element access of the last launch in `Kernel.trace`;
    max_dynamic_shared_bytes opts the kernel in to more than 48 KiB of shared memory per block, as CUDA's
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, n) does (227 KiB at most);
    engine="thread" runs one Python thread of control per CUDA thread; "auto" (the default, or the environment
    variable GPUSIM_ENGINE) first tries the vector engine (gpusim.wave), which gives the same results,
    counters and errors or hands the launch over to the thread engine ("vector" is a synonym);
    strict=True also reports threads that store the value an element already holds with nothing to order
    them (by default allowed: every order gives the same result, as CUDA guarantees).
    """
    return Kernel(kernel, check=check, schedule=schedule, seed=seed, timeout=timeout, record=record,
                  max_dynamic_shared_bytes=max_dynamic_shared_bytes, engine=engine, strict=strict)


class Kernel:
    """A simulated kernel: index it with a launch configuration, then call it; `report` describes the
    last launch."""

    def __init__(self, kernel, check=True, schedule="sequential", seed=None, timeout=DEFAULT_TIMEOUT_S,
                 record=False, max_dynamic_shared_bytes=None, engine=None, strict=False):
        schedule = as_schedule(schedule, seed)
        engine = engine or os.environ.get("GPUSIM_ENGINE") or "auto"
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
        self.engine = engine
        self.engine_used = None
        self.fallback = None
        opt_in = max_dynamic_shared_bytes
        if opt_in is not None and not 0 <= opt_in <= MAX_SHARED_BYTES_OPT_IN:
            raise ResourceError(
                f"max_dynamic_shared_bytes={opt_in}: a block may opt in to at most "
                f"{MAX_SHARED_BYTES_OPT_IN} bytes (227 KiB) of shared memory."
            )
        self.shared_limit = DEFAULT_SHARED_BYTES if opt_in is None else max(opt_in, DEFAULT_SHARED_BYTES)
        self.py_func = python_function(kernel)
        self.kernel = kernel
        self.declared = declared_types(kernel)  # the argument types of a declared signature, or None
        self.debug = debug_of(kernel)
        self.__name__ = self.py_func.__name__
        self.__doc__ = self.py_func.__doc__
        self.check = check
        self.strict = strict
        self.schedule = schedule  # a gpusim.schedule.Schedule
        self.timeout = timeout
        self.record = record and check
        self.report = None
        self.trace = None
        self.snapshots = None

    def __repr__(self):
        return f"<gpusim kernel {self.__name__} check={self.check}>"

    def __getitem__(self, config):
        grid, block, shared_bytes = parse_config(config)

        def launch(*args):
            args = apply_extensions(self.kernel, args)
            with error_state(self.debug):  # division by zero as the kernel's Numba error model has it
                self._launch(grid, block, shared_bytes, args)

        return launch

    def _launch(self, grid, block, shared_bytes, args):
        self.report = None
        self.trace = [] if self.record else None
        self.snapshots = None
        if shared_bytes > self.shared_limit:
            raise ResourceError(
                f"the launch asks for {shared_bytes} bytes of dynamic shared memory per block, but a block "
                f"may use {self.shared_limit} bytes"
                + (" unless the kernel opts in." if self.shared_limit == DEFAULT_SHARED_BYTES else "."),
                f"use less, or opt in as CUDA does with cudaFuncSetAttribute(..., "
                f"cudaFuncAttributeMaxDynamicSharedMemorySize, n): gpusim.jit(kernel, "
                f"max_dynamic_shared_bytes=n), n up to {MAX_SHARED_BYTES_OPT_IN} (227 KiB).",
            )
        start = time.monotonic()
        self.engine_used, self.fallback = "thread", None
        if self.engine == "thread":
            self.fallback = "engine='thread'"
        elif self.schedule.kind != "sequential" or self.record:
            self.fallback = f"the schedule {self.schedule.name!r}" if not self.record else "a recorded trace"
        elif self.debug:
            self.fallback = "debug=True (a division by zero raises ZeroDivisionError, thread by thread)"
        else:
            self.fallback = self._launch_vector(grid, block, shared_bytes, args, start)
            if self.fallback is None:
                self.engine_used = "vector"
                return
        memory = Memory()
        frozen = snapshot(self.kernel, self.py_func, args)
        rebinder = Rebinder(None, memory.codes, _constants(memory, self.check), frozen)
        fake = FakeCuda(lambda value: rebinder.value(value, None))
        rebinder.fake_cuda = fake
        fn = rebinder.function(self.py_func)
        counters = checker = None
        if self.check:
            counters = Counters(memory)
            checker = Checker(memory, counters, self.trace, self.strict)
        sim_args, copy_backs = convert_args(self.py_func, args, memory, self.check, self.declared)
        names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
        arrays = [name for name, arg in zip(names, sim_args, strict=True) if isinstance(arg, DeviceArray)]
        tag = fn.__globals__[TAG]
        fn, generator = rewrite(fn, rebinder.functions(), fake, arrays, tag)
        memory.codes[tag >> TAG_SHIFT] = fn.__code__
        kind = self.schedule.kind
        rng = random.Random(self.schedule.value) if kind == "random" else None
        priority = Priority(self.schedule) if kind not in ("sequential", "random") else None
        deadline = None if self.timeout is None else start + self.timeout
        scheduler = Scheduler(fn, sim_args, grid, block, shared_bytes, fake, memory, checker, rng, deadline,
                              generator=generator, priority=priority)
        scheduler.shared_limit = self.shared_limit
        try:
            with _alarm(self.timeout, start):
                scheduler.run()
        except KernelError as error:
            raise error.with_traceback(None) from error.__cause__
        finally:
            self.snapshots = scheduler.snapshots
            copy_back(copy_backs)
        nthreads = block.x * block.y * block.z
        launch = {
            "blocks": scheduler.blocks,
            "threads": scheduler.blocks * nthreads,
            "barriers": scheduler.barriers,
            "max_block_barriers": scheduler.max_block_barriers,
            "max_thread_collectives": scheduler.max_thread_collectives,
            "static_shared_bytes": scheduler.max_static_shared,
            "dynamic_shared_bytes": shared_bytes,
        }
        values = counters.values if counters else None
        self.report = Report(self.__name__, grid, block, self.check, launch, values)

    def _launch_vector(self, grid, block, shared_bytes, args, start):
        """Run the launch on the vector engine; None when it did, else why not (nothing changed then)."""
        code, reason = vector_code(self.py_func.__code__)
        if code is None:
            return reason
        saved = [(array, array.copy()) for array in host_arrays(args) if array.flags.writeable]
        launch = None
        for lanes_per_wave in (WAVE_LANES, 1):  # one block per wave if a wave logs too much
            try:
                launch = self._vector_launch(code, grid, block, shared_bytes, args, start, lanes_per_wave)
                break
            except Exception as error:  # noqa: BLE001 -- any failure: the thread engine reruns and reports it
                for array, copy in saved:
                    np.copyto(array, copy)
                if not isinstance(error, WaveTooLarge):
                    return str(error) or type(error).__name__
        if launch is None:
            return "a block with more element accesses than the vector engine keeps at once"
        fields = launch.report_fields()
        fields["dynamic_shared_bytes"] = shared_bytes
        values = launch.checker.counters.values if launch.checked else None
        self.report = Report(self.__name__, grid, block, self.check, fields, values)
        return None

    def _vector_launch(self, code, grid, block, shared_bytes, args, start, lanes_per_wave):
        memory = Memory()
        fake = VectorCuda(lambda value: rebinder.value(value, None))
        frozen = snapshot(self.kernel, self.py_func, args)
        rebinder = Rebinder(fake, memory.codes, _constants(memory, self.check), frozen)
        fn = rebinder.function(self.py_func)
        checker = Checker(memory, Counters(memory), None, self.strict) if self.check else None
        sim_args, copy_backs = convert_args(self.py_func, args, memory, self.check, self.declared)
        if not self.check:
            _refuse_aliases(sim_args)
        tag = fn.__globals__[TAG]
        memory.codes[tag >> TAG_SHIFT] = None  # the vector kernel numbers its sites (gpusim.counters)
        vector_fn = bind(code, fn)
        share = np.inf if self.timeout is None else self.timeout * VECTOR_SHARE_OF_TIMEOUT
        launch = VectorLaunch(vector_fn, sim_args, grid, block, shared_bytes, self.shared_limit, fake, memory,
                              checker, tag, start + share, lanes_per_wave)
        launch.run()
        copy_back(copy_backs)
        return launch


def _refuse_aliases(arrays):
    """An unchecked launch whose array arguments overlap runs on the thread engine (its order decides)."""
    plain = host_arrays(arrays)
    for i, a in enumerate(plain):
        for b in plain[i + 1:]:
            if np.may_share_memory(a, b):
                raise Bail("array arguments that share memory")


def _constants(memory, checked):
    """How a kernel sees a NumPy array it reads from module level or from a closure: as Numba does, a
    read-only constant (in a checked launch, a read-only global array whose reads are counted). A device
    array (cuda.to_device) is captured by reference instead: global memory the kernel may write."""

    def constant(array, name, device=False):
        if checked:
            return memory.global_array(array if device else np.ascontiguousarray(array), name,
                                       readonly=not device)
        if device:
            return array
        frozen = array.view()
        frozen.flags.writeable = False
        return frozen

    return constant


def _dims(value, what, limits):
    parts = value if isinstance(value, tuple) else (value,)
    if not 1 <= len(parts) <= 3:
        raise ResourceError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}.")
    dims = []
    for axis, part in enumerate(parts):
        if isinstance(part, bool) or not isinstance(part, numbers.Integral):
            raise ResourceError(
                f"{what} {value!r}: every dimension must be an integer, not {part!r}.",
                "compute sizes with // (integer division) or math.ceil, then int(...).",
            )
        if part < 1:
            raise ResourceError(
                f"{what} {value!r}: every dimension must be at least 1, not {part}.",
                "a launch needs at least one block of at least one thread.",
            )
        if part > limits[axis]:
            raise ResourceError(f"{what} {value!r}: dimension {'xyz'[axis]} may be at most {limits[axis]}.")
        dims.append(int(part))
    return Dim3(*(dims + [1] * (3 - len(dims))))


def parse_config(config):
    """(grid, block, dynamic shared bytes) from `k[grid, block]` or `k[grid, block, stream, nbytes]`."""
    if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
        raise ResourceError(
            f"launch with k[grid, block](...) or k[grid, block, stream, shared_bytes](...), "
            f"not k[{config!r}]."
        )
    grid = _dims(config[0], "grid", MAX_GRID_DIM)
    block = _dims(config[1], "block", MAX_BLOCK_DIM)
    nthreads = block.x * block.y * block.z
    if nthreads > MAX_THREADS_PER_BLOCK:
        raise ResourceError(
            f"block {tuple(block)} has {nthreads} threads; a block may have at most {MAX_THREADS_PER_BLOCK}.",
            "use more blocks of fewer threads (e.g. 256 per block).",
        )
    shared_bytes = config[3] if len(config) == 4 else 0
    if isinstance(shared_bytes, bool) or not isinstance(shared_bytes, numbers.Integral) or shared_bytes < 0:
        raise ResourceError(f"dynamic shared memory must be a number of bytes >= 0, not {shared_bytes!r}.")
    return grid, block, int(shared_bytes)


def _spin_note():
    """What threads that wait for a flag were doing when the time ran out (gpusim.flags), or "". It runs in a
    signal handler: an exception would surface wherever the kernel was, where an `except` could swallow it
    and the launch would never stop, so any failure gives "" instead."""
    scheduler = current.scheduler
    try:
        return scheduler.spin_note() if scheduler is not None else ""
    except Exception:  # noqa: BLE001
        return ""


@contextmanager
def _alarm(timeout, start=None):
    """Raise KernelTimeoutError `timeout` seconds after `start` (now by default), even inside a loop without
    barriers.

    Uses SIGALRM in the main thread and shares it: an alarm that was already set (pytest-timeout, for
    one) still fires at its time, and is re-armed for its remaining time afterwards. In another thread, a
    timer raises it in the launching thread (gpusim.threadalarm).
    """
    if timeout is None:
        yield
        return
    if threading.current_thread() is not threading.main_thread():
        with thread_alarm(timeout, time.monotonic() if start is None else start):
            yield
        return
    start = time.monotonic() if start is None else start
    limit = max(timeout - (time.monotonic() - start), 1e-3)

    def on_alarm(signum, frame):
        if time.monotonic() - start < timeout * 0.999 and callable(previous):
            return previous(signum, frame)
        if current.scheduler is None:
            # Not running the kernel yet, or already stopping because its own deadline check raised first
            # (that error carries the note): look again soon, unless the launch has ended by then.
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            return None
        raise KernelTimeoutError(f"the launch ran longer than its timeout of {timeout} s and was stopped."
                                 + _spin_note())

    previous = signal.signal(signal.SIGALRM, on_alarm)
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, limit)
    armed = time.monotonic()
    if 0 < outer_delay < limit:
        signal.setitimer(signal.ITIMER_REAL, outer_delay)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_delay > 0:
            remaining = max(outer_delay - (time.monotonic() - armed), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, remaining, outer_interval)
