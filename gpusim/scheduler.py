"""Runs a grid block after block, one greenlet per CUDA thread, switching at barriers and warp
collectives. Barrier and warp-collective mismatches are found as soon as no thread can move."""

import contextvars
import itertools
import sys
import time
from collections import deque

from greenlet import GreenletExit, getcurrent, greenlet

from . import sites
from .checker import SharedSnapshot
from .context import BARRIER, DONE, RUNNABLE, WARP, SimThread, current, fmt3, site_text, thread_list, who
from .errors import BarrierError, KernelError, KernelException, KernelTimeoutError
from .fakecuda import FULL_MASK, WARP_SIZE, Dim3
from .fences import WARP_EPOCH_MASK
from .flags import Flags
from .spaces import MemorySpaces
from .warps import WarpCollectives

_getframe = sys._getframe
TAG = sites.TAG


def _trim_to_user_code(exc):
    tb = exc.__traceback__
    while tb is not None and not sites.is_user_frame(tb.tb_frame):
        tb = tb.tb_next
    if tb is not None:
        exc.__traceback__ = tb


def _kernel_exception(exc):
    """KernelException for an exception the kernel raised: who, where, what."""
    _trim_to_user_code(exc)
    where = sites.traceback_user_line(exc.__traceback__)
    place = f" at {sites.describe_line(*where)}" if where else ""
    return KernelException(f"{who()} raised {type(exc).__name__}{place}: {exc}")


class Scheduler(WarpCollectives, MemorySpaces, Flags):
    """Executes one launch; `current.scheduler` points here while it runs."""

    def __init__(self, fn, args, grid, block, dynamic_bytes, fake, memory, checker, rng=None, deadline=None,
                 generator=False, priority=None):
        self.fn = fn
        self.generator = generator  # fn is a generator function: threads are generators (gpusim.generators)
        self.args = args
        self.grid = grid
        self.block = block
        self.dynamic_bytes = dynamic_bytes
        self.shared_limit = 48 * 1024
        self.fake = fake
        self.memory = memory
        self.checker = checker
        self.checked = checker is not None
        self.snapshots = [] if self.checked and checker.trace is not None else None
        self.log = memory.log if self.checked else None
        self.rng = rng
        self.priority = priority  # gpusim.schedule.Priority of a "hold", "ahead" or "delay" schedule, or None
        self.deadline = deadline
        self.barriers = 0
        self.max_block_barriers = 0
        self.max_thread_collectives = 0
        self.max_static_shared = 0
        self.blocks = 0
        self.main = None
        self.clocks = None
        self.poll_keys = 0
        self.sync_sites = {}
        self.const_arrays = {}  # id(host array) -> (host array, its constant copy): one per launch

    def run(self):
        current.scheduler = self
        self.main = getcurrent()
        self.fake.blockDim, self.fake.gridDim = self.block, self.grid
        self.fake.syncthreads = self._not_here if self.generator else self.syncthreads
        bx, by, bz = self.block
        cells = itertools.product(range(bz), range(by), range(bx))
        self.threads = [SimThread(Dim3(tx, ty, tz), i) for i, (tz, ty, tx) in enumerate(cells)]
        try:
            for bz in range(self.grid.z):
                for by in range(self.grid.y):
                    for bx in range(self.grid.x):
                        self._run_block(Dim3(bx, by, bz))
        finally:
            current.scheduler = current.thread = current.block = None
            self.threads = []
            self.queue = None

    def _run_block(self, block_idx):
        self.fake.blockIdx = current.block = block_idx
        threads = self.threads
        for thread in threads:
            thread.reset()
        self.live = len(threads)
        nwarps = (len(threads) + WARP_SIZE - 1) // WARP_SIZE
        self.present = [FULL_MASK] * nwarps
        if len(threads) % WARP_SIZE:
            self.present[-1] = (1 << len(threads) % WARP_SIZE) - 1
        self.exited = [0] * nwarps
        self.pending = [{} for _ in range(nwarps)]
        self.shared = {}
        self.epoch = 0
        self.static_shared_bytes = 0
        self.dynamic = None
        self.clocks = None
        if self.checked:
            self.checker.clocks = None
            self.checker.begin_block(block_idx, threads, self.block)
        self.waiting = []
        self.queue = self._in_run_order(threads)
        try:
            if self.generator:
                self._run_generators()
            while True:
                if self.queue:  # its head is the thread to run: every hand-over that comes here chose it
                    self._start(self.queue.popleft())
                elif self.live:
                    self._resolve()
                else:
                    break
        except KernelTimeoutError:
            raise
        except Exception:
            if self.checked:
                self.checker.flush()
            raise
        if self.checked:
            self.checker.end_block()
        self._snapshot()
        self.blocks += 1
        self.max_block_barriers = max(self.max_block_barriers, self.epoch)
        collectives = max(t.wepoch & WARP_EPOCH_MASK for t in threads)
        self.max_thread_collectives = max(self.max_thread_collectives, collectives)
        self.max_static_shared = max(self.max_static_shared, self.static_shared_bytes)

    def _in_run_order(self, threads):
        if self.rng is not None:
            threads = list(threads)
            self.rng.shuffle(threads)
        elif self.priority is not None:
            threads = sorted(threads, key=self.priority.rank)
        return deque(threads)

    def _choose(self):
        """Under a "hold", "ahead" or "delay" schedule: move the thread to run next to the queue's front."""
        queue = self.queue
        if queue:
            i = self.priority.pick(queue, self.stalled)
            if i:
                thread = queue[i]
                del queue[i]
                queue.appendleft(thread)

    def _enter(self, thread):
        """Make `thread` the running one: context for `cuda.*`, a log segment, the timeout check."""
        current.thread = thread
        fake = self.fake
        fake.threadIdx = thread.idx
        fake.laneid = thread.lane
        if self.checked:
            self.log.segments.extend((len(self.log.keys), thread.linear, thread.wepoch))
        self._check_deadline(thread)

    def _check_deadline(self, thread):
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise KernelTimeoutError(f"the launch ran past its timeout; it stopped in {who(thread)}."
                                     + self.spin_note())

    def _start(self, thread):
        """From the scheduler: run `thread` (and those it hands over to) until all block or one exits."""
        self._enter(thread)
        try:
            if thread.glet is None:
                worker = greenlet(self._worker)
                worker.gr_context = contextvars.copy_context()  # the launch's NumPy error state (errormodel)
                worker.switch(thread)
            else:
                thread.glet.switch()
        except (KernelError, GreenletExit):
            raise
        except Exception as exc:
            raise _kernel_exception(exc) from exc

    def _worker(self, thread):
        """Greenlet body: run threads that have not started yet, one after another, until one blocks."""
        me = getcurrent()
        fn, args, queue = self.fn, self.args, self.queue
        while True:
            thread.glet = me
            returned = fn(*args)
            self._exit(thread, returned)
            if self.priority is not None:
                self._choose()
            if not queue or queue[0].glet is not None:
                return
            thread = queue.popleft()
            self._enter(thread)

    def _exit(self, thread, returned):
        """`thread` returned from the kernel."""
        if returned is not None:
            raise KernelError(
                f"{who(thread)}: kernel {self.fn.__name__} returned {returned!r}, but a CUDA kernel cannot "
                f"return a value.",
                "write results into an output array argument (out[i] = value) and end with a bare "
                "`return` or none at all.",
            )
        thread.state = DONE
        self.live -= 1
        self.exited[thread.warp] |= 1 << thread.lane

    def _run_generators(self):
        """Run the block's threads as generators that yield at each cuda.syncthreads(): each runnable thread
        in queue order up to its next barrier or its end, then release the barrier (or say who is stuck)."""
        fn, args, queue, sync_sites, fake = self.fn, self.args, self.queue, self.sync_sites, self.fake
        segments, keys = (self.log.segments, self.log.keys) if self.checked else (None, None)
        while True:
            if queue:
                self._check_deadline(queue[0])  # once per barrier, as on greenlets
            while queue:
                thread = queue.popleft()
                current.thread = thread  # `_enter` without its timeout check
                fake.threadIdx = thread.idx
                fake.laneid = thread.lane
                if segments is not None:
                    segments.extend((len(keys), thread.linear, thread.wepoch))
                gen = thread.glet
                if gen is None:
                    gen = thread.glet = fn(*args)
                try:
                    gen.send(None)
                except StopIteration as stop:
                    self._exit(thread, stop.value)
                    continue
                except KernelError:
                    raise
                except Exception as exc:
                    raise _kernel_exception(exc) from exc
                frame = gen.gi_frame
                key = (frame.f_code, frame.f_lasti)
                site = sync_sites.get(key)
                if site is None:
                    site = sync_sites[key] = ("syncthreads", (key,))
                thread.state = BARRIER
                thread.site = site
                self.waiting.append(thread)
            if not self.live:
                return
            self._resolve()

    def _not_here(self):
        raise KernelError(
            f"{who()} reached a barrier or warp collective that gpusim did not expect: it runs this kernel's "
            f"threads as generators, which only stop at cuda.syncthreads() statements of the kernel itself.",
            "this is a gpusim bug; please report it with the kernel.",
        )

    def _switch_away(self):
        """From a blocked thread: hand over to the next suspended thread, or to the scheduler (which also
        starts new greenlets, so that they do not inherit this one's recursion depth)."""
        if self.generator:
            self._not_here()
        if self.priority is not None:
            self._choose()
        queue = self.queue
        if not queue or queue[0].glet is None:
            self.main.switch()
            return
        thread = queue.popleft()
        self._enter(thread)
        thread.glet.switch()

    # --- block-wide barriers -------------------------------------------------------------

    def syncthreads(self):
        """cuda.syncthreads(), bound straight into the fake `cuda` module: the hottest switch point. Called
        from the kernel itself (not a device function), the site is that one frame's instruction, and one
        tuple per site is shared by all threads so that `_all_at` compares by identity."""
        thread = current.thread
        thread.state = BARRIER
        frame = _getframe(1)
        back = frame.f_back
        if TAG in frame.f_globals and (back is None or TAG not in back.f_globals):
            key = (frame.f_code, frame.f_lasti)
            site = self.sync_sites.get(key)
            if site is None:
                site = self.sync_sites[key] = ("syncthreads", (key,))
            thread.site = site
        else:
            thread.site = ("syncthreads", sites.user_stack(2))
        self.waiting.append(thread)
        if self.priority is not None:
            self._choose()
        queue = self.queue
        if queue and queue[0].glet is not None:
            # `_enter` inlined; its timeout check is left to the scheduler, which every barrier passes through
            thread = queue.popleft()
            current.thread = thread
            fake = self.fake
            fake.threadIdx = thread.idx
            fake.laneid = thread.lane
            if self.checked:
                log = self.log
                log.segments.extend((len(log.keys), thread.linear, thread.wepoch))
            thread.glet.switch()
        else:
            self.main.switch()

    def barrier(self, kind, value):
        """Called by a thread at cuda.syncthreads_*(); returns the barrier's result."""
        thread = current.thread
        thread.state = BARRIER
        thread.value = value
        thread.site = (kind, sites.user_stack(3))
        self.waiting.append(thread)
        self._switch_away()
        return thread.result

    def _resolve(self):
        """Nothing can run: release a barrier that every thread reached, or report who is stuck where (in
        checked and unchecked launches alike: a divergent barrier hangs or corrupts a real GPU)."""
        waiting = self.waiting
        if len(waiting) == self.live:
            site = waiting[0].site
            if self.live == len(self.threads) and self._all_at(site, waiting):
                self.waiting = []
                self._release(waiting)
                return
        if self._release_active_masks():
            return
        in_warp_ops = [t for t in self.threads if t.state == WARP]
        raise BarrierError(self._stuck_report(waiting, in_warp_ops))

    @staticmethod
    def _all_at(site, threads):
        for t in threads:
            if t.site is not site and t.site != site and not sites.same_site(t.site, site):
                return False
        return True

    def _snapshot(self):
        """When recording, keep a copy of the block's shared arrays at the end of the current phase."""
        if self.snapshots is None:
            return
        arrays = {}
        for arr in self.shared.values():
            if arr.region.name not in arrays:
                arrays[arr.region.name] = arr._flat[arr._e0: arr._e0 + arr.size].reshape(arr.shape).copy()
        self.snapshots.append(SharedSnapshot(tuple(current.block), self.epoch, arrays))

    def _release(self, waiting):
        if self.checked:
            self.checker.end_epoch()
            if self.clocks is not None:  # the next phase follows flags again from its first fence or spin
                self.checker.flush()
                self.clocks.close()
                self.clocks = self.checker.clocks = None
        self._snapshot()
        self.epoch += 1
        kind = waiting[0].site[0]
        result = None
        if kind != "syncthreads":
            truths = [bool(t.value) for t in waiting]
            result = {"count": sum(truths), "and": int(all(truths)), "or": int(any(truths))}[kind]
        for t in waiting:
            t.state = RUNNABLE
            t.result = result
        self.queue.extend(self._in_run_order(waiting))
        self.barriers += 1

    def _stuck_report(self, waiting, in_warp_ops):
        lines = [
            f"block {fmt3(current.block)} cannot continue: its threads do not all reach the same barrier."
        ]
        by_site = {}
        for t in waiting + in_warp_ops:
            by_site.setdefault((t.site[0], sites.normalized(t.site[1])), []).append(t)
        for site, threads in by_site.items():
            threads.sort(key=lambda t: t.linear)
            lines.append(f"  {thread_list(threads)} wait at {site_text(site)} ({site[0]})")
        done = [t for t in self.threads if t.state == DONE]
        if done:
            lines.append(f"  {thread_list(done)} have exited (returned) without reaching it")
        return "\n".join(lines)
