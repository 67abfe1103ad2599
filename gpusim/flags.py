"""Threads that wait for each other through flags: polls, spinning, fences and the deadlock nobody can end.

gpusim switches threads only at barriers, warp collectives and the points below, so a loop that waits for
another thread's write must give the other threads a turn. Numba has no volatile loads: on a GPU a plain
load in a loop may be read once and kept in a register, so the only correct way to poll a flag is an atomic
(`cuda.atomic.add(flags, i, 0)`, `cuda.atomic.cas`, ...). gpusim treats an atomic that leaves its element
unchanged as a poll. A thread that repeats the same poll and sees the same value, with no other memory access
in between, is spinning: it hands over to the other threads. When every thread that can still run is spinning
and nothing has changed since each one's last poll, no thread will ever set the flags they wait for: a
`DeadlockError` (checked launches) names who waits on which element, and who waits at a barrier.

Fences (`cuda.threadfence_block()` and the wider ones) and spinning polls switch on `gpusim.fences`, which
follows the release/acquire order they create, so that data handed over through a flag is not a race.
"""

import numpy as np

from . import sites
from .arrays import KIND_SHIFT, READ, SIZE_SHIFT, TAG_SHIFT, DeviceArray
from .context import BARRIER, DONE, WARP, current, fmt3, site_text, thread_list
from .errors import DeadlockError
from .fences import Clocks
from .memory import OFFSET_MASK, REGION_BITS


class Flags:
    """Mixin of Scheduler: needs threads, queue, live, barriers, checked, checker, log, clocks, poll_keys,
    _switch_away."""

    def fence(self):
        """cuda.threadfence_block(), cuda.threadfence() or cuda.threadfence_system() by the running thread;
        under a "delay" schedule, a thread of the delayed warp waits here until no other warp can move."""
        thread = current.thread
        if self.checked:
            if self.clocks is None:
                self._follow_flags()
            self.clocks.fence(thread, sites.user_frame(3))
        if self.priority is not None and self.priority.park(thread):
            self.queue.append(thread)
            self._switch_away()

    def _follow_flags(self):
        self.clocks = Clocks(self.threads, self.log, len(self.log.epoch_ends))
        self.checker.clocks = self.clocks

    def after_atomic(self, array, index, address, old, new, operands):
        """Called after an atomic that left its element unchanged (a poll), and after every atomic while
        fences are followed: feeds the fence clocks; hands over when the thread spins or updates a flag."""
        thread = current.thread
        clocks = self.clocks
        if not old == new:  # a flag update (fakecuda only calls here for one while fences are followed)
            clocks.atomic(thread, address, True, old)
            self.queue.append(thread)  # let the threads that wait for it see it
            self._switch_away()
            return
        if clocks is not None:
            clocks.atomic(thread, address, False, old)
        poll = (address, old, operands)
        if self.checked:
            self.poll_keys += 2
            spinning = thread.poll == poll and thread.poll_at == len(self.log.keys) - 2
        else:
            spinning = thread.poll == poll
        thread.poll = poll
        if spinning:
            thread.poll_where = (array, index, address)
            if self.priority is not None:
                thread.watch = _watch(array, index, address, old)
            if self.checked and self.clocks is None:
                self._follow_flags()
            self._spin(thread)
        if self.checked:
            thread.poll_at = len(self.log.keys)

    def _progress(self):
        """Changes whenever anything but a poll happens: a memory access, a barrier, an exit."""
        accesses = len(self.log.keys) - self.poll_keys if self.checked else 0
        return self.barriers, self.live, accesses

    def _spin(self, thread):
        """The running thread polled the same value twice in a row: let the others run first."""
        thread.stall = self._progress()
        thread.site = ("poll", sites.user_stack(3))
        if self.checked and all(t.glet is not None and t.stall == thread.stall for t in self.queue):
            raise DeadlockError(self._deadlock_report(thread))
        self.queue.append(thread)
        thread.spinning = True
        self._switch_away()
        thread.spinning = False

    @staticmethod
    def stalled(thread):
        """Is `thread` spinning on a flag that still holds the value it saw? (A poll would see the same, and
        the thread made no other access between its last two polls, so it would spin again.)"""
        if not thread.spinning:
            return False
        values, key, seen = thread.watch
        return values[key] == seen

    def _deadlock_report(self, spinner):
        lines = [f"block {fmt3(current.block)} cannot continue: every thread that can still run waits in a "
                 f"loop for a flag, and none of them can change a flag any more."]
        by_place = {}
        for t in [spinner, *self.queue]:
            where = t.poll_where
            by_place.setdefault((sites.normalized(t.site[1]), where[2]), (t.site, where, []))[2].append(t)
        for site, where, threads in by_place.values():
            threads.sort(key=lambda t: t.linear)
            lines.append(f"  {thread_list(threads)} poll {_element(*where)} at {site_text(site)}: it holds "
                         f"{_value(*where)}")
        waiting = sorted((t for t in self.threads if t.state in (BARRIER, WARP)), key=lambda t: t.linear)
        by_site = {}
        for t in waiting:
            by_site.setdefault((t.site[0], sites.normalized(t.site[1])), []).append(t)
        for threads in by_site.values():
            site = threads[0].site
            lines.append(f"  {thread_list(threads)} wait at {site_text(site)} ({site[0]})")
        done = [t for t in self.threads if t.state == DONE]
        if done:
            lines.append(f"  {thread_list(done)} have exited")
        return "\n".join(lines)

    def spin_note(self):
        """For a timeout: which threads were polling, or re-reading one element with plain loads."""
        running = current.thread
        spinners = [t for t in [running, *(self.queue or ())] if t is not None and t.stall is not None
                    and t.poll_where is not None and t.state not in (BARRIER, WARP, DONE)]
        if spinners:
            where = spinners[0].poll_where
            return (f" {thread_list(spinners)} were waiting in loops that poll {_element(*where)} (which "
                    f"holds {_value(*where)}); with check=True gpusim reports who should set it.")
        if not self.checked or running is None:
            return ""
        return _plain_spin_note(self.log, self.memory, running)


def _element(array, index, address):
    """`flags[1]` for the polled element (`element 1` of an unchecked launch's NumPy array)."""
    if isinstance(array, DeviceArray):
        return array.region.element_text(int(address) * array.dtype.itemsize - array.region.base)
    return f"element {index}"


def _watch(array, index, address, seen):
    """(values, key, seen): the polled element is values[key], and the poll saw `seen` there."""
    if isinstance(array, DeviceArray):
        return array._flat, int(address) - array._kb, seen
    return array, index, seen


def _value(array, index, address):
    if isinstance(array, DeviceArray):
        return array._flat[int(address) - array._kb]
    return array[index]


PLAIN_SPIN_ENTRIES = 256


def _plain_spin_note(log, memory, thread):
    """If the last logged accesses are the running thread reading one element over and over: say so. (Called
    from a signal handler, which may have stopped an access between its two log entries.)"""
    keys = np.frombuffer(log.keys, dtype=np.int64)
    keys = keys[: len(keys) // 2 * 2]
    if len(keys) < 2 * PLAIN_SPIN_ENTRIES or not log.segments or log.segments[-2] != thread.linear:
        return ""
    start = log.segments[-3]
    tail = keys[len(keys) - 2 * PLAIN_SPIN_ENTRIES:].reshape(-1, 2)
    if len(keys) - 2 * PLAIN_SPIN_ENTRIES < start:
        return ""
    element, meta = tail[:, 0], tail[:, 1]
    if ((meta >> KIND_SHIFT) & 3 != READ).any() or len(np.unique(element)) > 2:
        return ""
    address = int(element[-1]) << int((meta[-1] >> SIZE_SHIFT) & 7)
    region = memory.regions[address >> REGION_BITS]
    place = sites.describe(memory.codes[int((meta[-1] >> TAG_SHIFT) & 0xFF)], int(meta[-1] & 0xFFFF))
    element = region.element_text(address & OFFSET_MASK)
    return (f" Thread {fmt3(thread.idx)} was reading {element} over and over at {place}: a loop that waits "
            f"for another thread must poll with an atomic "
            f"(cuda.atomic.add(flags, i, 0)). A plain read never lets another thread run in gpusim, and on a "
            f"GPU the compiler may read it once and keep it in a register.")
