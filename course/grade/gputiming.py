"""Timing a learner's kernel on a GPU so that only the kernel's own work can make it fast.

Public leaderboards of GPU kernels have been gamed by submissions that fake the timing: results kept from an
earlier run, work left on another stream for the clock to miss, a fast path for the benchmark's shapes. The
protocol below leaves each of them no speed credit:

* the grader rebuilds the kernel from its spec (:mod:`course.kernelsource`) and compiles and launches it
  itself, on its own stream: no learner Python runs while it times;
* every repetition draws new inputs, and every timed run's output is checked against the grader's
  reference: a kept result, or a shortcut on the benchmark's shapes, is wrong on some run;
* the output is poisoned (NaN) before each run, so a kernel that skips work leaves NaN behind;
* L2 is flushed before each run (a buffer twice its size is written), so no run reads another's data from
  cache;
* the stream is then kept busy (a kernel that sleeps :data:`COVER_MS`) while the host records the start
  event and launches, so that the host's part of a launch (Python, argument checks) is not timed: the start
  event fires when the sleep ends, with the kernel already queued behind it;
* the device is synchronised before the start event; after the stop event (both on the grader's stream)
  the host first waits for the stop event alone, then for the whole device: work left on another stream,
  still running when the grader's stream has finished, keeps the device busy after the stop event, and the
  timing is refused. (Work on another stream that ends before the stop event is inside the timed window:
  the stop event is recorded only once the launch has returned.)
* the result is the median of the timed repetitions (after warm-up runs), with the quartiles.

The protocol is written against a small device interface (:class:`Device`), so that its order of steps and
its checks are tested on the CPU with a recording device; :class:`NumbaDevice` is the real one.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

TRAILING_MS = 0.25  # the device still busy this long after the grader's stream finished: work outside it
COVER_MS = 2  # the sleep before the start event: longer than any launch's host-side work
WARMUP = 2
REPETITIONS = 10


class Device:
    """What the protocol needs of a GPU: arrays, a stream, events, synchronisation, an L2 flush."""

    def upload(self, array: np.ndarray):
        raise NotImplementedError

    def poison(self, array) -> None:
        raise NotImplementedError

    def flush_l2(self) -> None:
        raise NotImplementedError

    def cover(self, ms: int) -> None:
        """Keep the grader's stream busy for about ``ms`` milliseconds (queued, not waited for)."""
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError

    def record(self) -> object:
        """An event recorded on the grader's stream now."""
        raise NotImplementedError

    def wait(self, event) -> None:
        """Block the host until ``event`` has happened (and nothing more)."""
        raise NotImplementedError

    def elapsed_ms(self, start, stop) -> float:
        raise NotImplementedError

    def download(self, array) -> np.ndarray:
        raise NotImplementedError

    @property
    def stream(self):
        raise NotImplementedError


@dataclass
class Timing:
    """The verdict of one kernel's timing: ``refused`` is why it earns no speed credit ("" if it does)."""

    name: str
    times_ms: list[float] = field(default_factory=list)
    refused: str = ""

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms) if self.times_ms and not self.refused else float("nan")

    @property
    def quartiles_ms(self) -> tuple[float, float]:
        if len(self.times_ms) < 2 or self.refused:
            return (float("nan"), float("nan"))
        low, _, high = statistics.quantiles(self.times_ms, n=4)
        return low, high


def time_kernel(name: str, device: Device, launch: Callable, draw: Callable[[int], list[np.ndarray]],
                reference: Callable[[int, list[np.ndarray]], list[np.ndarray]], outputs: tuple[int, ...],
                tolerance: float, repetitions: int = REPETITIONS, warmup: int = WARMUP,
                clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Time ``launch(stream, *arguments)`` by the protocol above. ``draw(run)`` makes run ``run``'s kernel
    arguments as host arrays (new values every run); those at the indexes ``outputs`` are poisoned first,
    and after the run must match ``reference(run, arguments)`` (one array per output) within ``tolerance``,
    relative to each answer's largest magnitude."""
    timing = Timing(name)
    for run in range(warmup + repetitions):
        arguments = draw(run)
        on_device = [device.upload(array) for array in arguments]
        for index in outputs:
            device.poison(on_device[index])
        device.synchronize()
        device.flush_l2()
        device.cover(COVER_MS)
        start = device.record()
        launch(device.stream, *on_device)
        stop = device.record()
        device.wait(stop)
        stopped = clock()
        device.synchronize()
        trailing_ms = (clock() - stopped) * 1e3
        event_ms = device.elapsed_ms(start, stop)
        expected = reference(run, arguments)
        wrong = next((why for why in (_wrong(device.download(on_device[index]), answer, tolerance)
                                      for index, answer in zip(outputs, expected, strict=True)) if why), "")
        if wrong:
            timing.refused = f"run {run}: {wrong}"
            return timing
        if trailing_ms > TRAILING_MS:
            timing.refused = (f"run {run}: the device was still busy {trailing_ms:.2f} ms after the grader's "
                              f"stream had finished (timed at {event_ms:.2f} ms): work ran outside the timed "
                              f"stream")
            return timing
        if run >= warmup:
            timing.times_ms.append(event_ms)
    return timing


def _wrong(got: np.ndarray, expected: np.ndarray, tolerance: float) -> str:
    """Why an output is not the reference's ("" when it is)."""
    if got.shape != expected.shape:
        return f"output of shape {got.shape}, expected {expected.shape}"
    if not np.isfinite(got).all():
        return f"{int((~np.isfinite(got)).sum())} output elements left unwritten (still the poison, NaN)"
    scale = max(float(np.abs(expected).max()), 1e-30)
    error = float(np.abs(got.astype(np.float64) - expected).max()) / scale
    if error > tolerance:
        return f"largest error {error:.2e} of the output's scale, over the tolerance {tolerance:.0e}"
    return ""


class NumbaDevice(Device):
    """The real device, through Numba's CUDA driver: one stream of the grader's, events with timing."""

    def __init__(self, l2_bytes: int | None = None):
        from numba import cuda
        from numba.cuda.cudadrv.driver import device_memset

        from .gpuspin import spin

        self.cuda, self.memset, self.spin = cuda, device_memset, spin
        self._stream = cuda.stream()
        size = cuda.get_current_device().L2_CACHE_SIZE if l2_bytes is None else l2_bytes
        self.scratch = cuda.device_array(2 * max(int(size), 2**20), dtype=np.uint8)

    @property
    def stream(self):
        return self._stream

    def upload(self, array):
        if np.ndim(array) == 0:  # a scalar argument (a task's 0-d array) goes by value
            return np.asarray(array)[()]
        return self.cuda.to_device(np.ascontiguousarray(array), stream=self._stream)

    def poison(self, array) -> None:
        self.memset(array, 0xFF, array.nbytes, self._stream)  # every byte 0xFF: NaN in float32 and float64

    def flush_l2(self) -> None:
        self.memset(self.scratch, 0, self.scratch.nbytes, self._stream)

    def cover(self, ms: int) -> None:
        self.spin[1, 1, self._stream](ms)

    def synchronize(self) -> None:
        self.cuda.synchronize()

    def record(self):
        event = self.cuda.event(timing=True)
        event.record(self._stream)
        return event

    def wait(self, event) -> None:
        event.synchronize()

    def elapsed_ms(self, start, stop) -> float:
        return self.cuda.event_elapsed_time(start, stop)

    def download(self, array) -> np.ndarray:
        return array.copy_to_host(stream=self._stream)
