"""When a request to a worker has taken too long, and whose doing that is.

With a cgroup per submission (:mod:`.cgroups`), a request has two limits of ``limit_s`` seconds each,
counted from when it was sent: the CPU time that the submission's processes used (a loop that never ends),
and the time in which none of them was runnable (a sleep, or a lock that is never released). Time spent
runnable but waiting for a CPU counts in neither, so other work on the machine (another submission, another
grader) slows a submission down without bringing it closer to a timeout. A submission's own threads cannot
fake such waiting: with a quota of ``cpus`` CPUs, its threads only wait for each other while it uses its
quota, and that uses up its CPU time. The wall clock is only an outer bound, ``WALL_FACTOR`` times the limit
plus ``WALL_MARGIN_S``: reaching it means the machine was too busy to give the submission its CPU
(:class:`MachineBusy`), and the grader tries again.

Without a cgroup, the limit is wall-clock time, as before.
"""

from __future__ import annotations

import time
from typing import Protocol

WALL_FACTOR, WALL_MARGIN_S = 10.0, 60.0
POLL_S = 0.05


class WorkerTimeout(Exception):
    """The worker ran past its limit and was killed; the message says how (``after 4.0 s of CPU time``)."""


class MachineBusy(Exception):
    """The wall-clock bound ran out while the submission was runnable: the machine was too busy."""


class Clock(Protocol):
    cpus: float

    def cpu_s(self) -> float: ...

    def runnable_s(self) -> dict[int, float]: ...


class Deadline:
    """One request's limits: ``limit_s`` seconds of CPU time and ``limit_s`` seconds of idleness of the
    submission, as ``clock`` (its cgroup) measures them; without a clock, ``limit_s`` of wall-clock time."""

    def __init__(self, limit_s: float, clock: Clock | None = None):
        self.limit_s, self.clock = limit_s, clock
        self.start = time.monotonic()
        self.next_look = self.start
        self.at_end: tuple[float, float, float] | None = None  # the measures that ended it
        self.looked_late = False
        if clock is None:
            self.wall_end = self.start + limit_s
        else:
            self.wall_end = self.start + WALL_FACTOR * limit_s + WALL_MARGIN_S
            self.cpu_start, self.runnable_start = clock.cpu_s(), clock.runnable_s()

    def spent_s(self) -> float:
        """CPU seconds used since the start (wall-clock seconds without a clock)."""
        if self.clock is None:
            return time.monotonic() - self.start
        return self.clock.cpu_s() - self.cpu_start

    def _measure(self) -> tuple[float, float, float]:
        """Seconds since the start: elapsed, of CPU used, and idle (no thread of the submission runnable).
        Threads that ended are missed, but their CPU time is not: runnable time is at least the CPU time."""
        elapsed, used = time.monotonic() - self.start, self.spent_s()
        threads = sum(max(0.0, seconds - self.runnable_start.get(tid, 0.0))
                      for tid, seconds in self.clock.runnable_s().items())
        return elapsed, used, elapsed - min(elapsed, max(threads, used))

    def wait_s(self) -> float:
        """How long to wait for the worker before looking again; 0 once the deadline has passed. CPU time
        grows by at most ``cpus`` seconds per second, and idleness by one, so the next look is due when the
        smaller of the two could have reached its limit."""
        now = time.monotonic()
        wall_left = self.wall_end - now
        if self.clock is None or wall_left <= 0:
            return max(wall_left, 0.0)
        if now < self.next_look:
            return min(self.next_look - now, wall_left)
        measures = elapsed, used, idle = self._measure()
        if used >= self.limit_s or idle >= self.limit_s:
            self.at_end = measures
            return 0.0
        wait = min(wall_left, max(min((self.limit_s - used) / self.clock.cpus, self.limit_s - idle), POLL_S))
        self.next_look = now + wait
        return wait

    def late_look(self) -> bool:
        """Whether the pipe may be read (or written) once more after the deadline passed: true the first
        time only, so that a reply that was waiting while the grader itself was held up still counts."""
        first, self.looked_late = not self.looked_late, True
        return first

    def overrun(self) -> Exception:
        """Once the deadline has passed: the exception that says why (call before killing the worker)."""
        if self.clock is None:
            return WorkerTimeout(f"after {self.limit_s:.1f} s")
        elapsed, used, idle = self.at_end or self._measure()
        if used >= self.limit_s:
            return WorkerTimeout(f"after {self.limit_s:.1f} s of CPU time")
        if idle >= self.limit_s:
            return WorkerTimeout(f"after {idle:.0f} s of waiting without computing")
        return MachineBusy(f"in {elapsed:.0f} s it got only {used:.1f} s of CPU time")
