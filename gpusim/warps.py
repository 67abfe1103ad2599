"""Warp collectives (syncwarp, shuffles, votes, activemask) for the scheduler: the named lanes of a
warp wait for each other, like the threads of a block at a barrier."""

import numpy as np

from . import sites
from .context import DONE, RUNNABLE, WARP, current, site_text, thread_list, who
from .errors import BarrierError
from .fakecuda import FULL_MASK, WARP_SIZE

WARP_OPS = {
    "syncwarp": "cuda.syncwarp",
    "shfl": "cuda.shfl_sync",
    "up": "cuda.shfl_up_sync",
    "down": "cuda.shfl_down_sync",
    "xor": "cuda.shfl_xor_sync",
    "ballot": "cuda.ballot_sync",
    "all": "cuda.all_sync",
    "any": "cuda.any_sync",
    "eq": "cuda.eq_sync",
    "match_any": "cuda.match_any_sync",
    "match_all": "cuda.match_all_sync",
}
VOTES = ("ballot", "all", "any", "eq")


class WarpCollectives:
    """Mixin of Scheduler: needs threads, queue, present, exited, pending, checked, log, clocks, _switch_away,
    _stuck_report."""

    def active_mask(self):
        """Wait until the other lanes of the warp have exited or are blocked; the lanes waiting here then
        form the converged group, and its mask is the result (so a divergent branch sees only its lanes)."""
        thread = current.thread
        thread.state = WARP
        thread.site = ("activemask", sites.user_stack(3))
        self._switch_away()
        return thread.result

    def _release_active_masks(self):
        """Answer every group of lanes waiting at cuda.activemask(); False if there is none."""
        groups = {}
        for t in self.threads:
            if t.state == WARP and t.site[0] == "activemask":
                groups.setdefault((t.warp, sites.normalized(t.site[1])), []).append(t)
        for group in groups.values():
            mask = sum(1 << t.lane for t in group)
            for t in group:
                t.state = RUNNABLE
                t.result = np.uint32(mask)
            self.queue.extend(group)
        return bool(groups)

    def warp(self, op, mask, value, arg):
        """Called by a lane at a warp collective; returns the lane's result once all named lanes arrive."""
        thread = current.thread
        mask = int(mask) & FULL_MASK
        if not mask >> thread.lane & 1:
            raise BarrierError(
                f"{who()} called {WARP_OPS[op]} with mask {mask:#010x}, which leaves out its own lane "
                f"{thread.lane}.",
                "a lane must include itself in the mask; use cuda.activemask() or 0xffffffff.",
            )
        thread.state = WARP
        thread.site = (op, sites.user_stack(3))
        thread.value, thread.arg, thread.mask = value, arg, mask
        w = thread.warp
        pending = self.pending[w]
        pending[thread.lane] = thread
        need = mask & self.present[w]
        if need & self.exited[w]:
            gone = [t for t in self.threads if t.warp == w and t.state == DONE and need >> t.lane & 1]
            raise BarrierError(
                f"{who()} waits at {site_text(thread.site)} ({WARP_OPS[op]}) for lanes of mask "
                f"{mask:#010x}, but {thread_list(gone)} have exited.",
                "name only live lanes in the mask (cuda.activemask()), or do not return early before it.",
            )
        if all(lane in pending for lane in _lanes(need)):
            self._complete_warp([pending[lane] for lane in _lanes(need)], thread)
            return thread.result
        self._switch_away()
        return thread.result

    def _complete_warp(self, group, caller):
        if any(t.mask != caller.mask or not sites.same_site(t.site, caller.site) for t in group):
            raise BarrierError(self._stuck_report([], group))
        values = {t.lane: t.value for t in group}
        op = caller.site[0]
        if op in VOTES:
            truths = [bool(v) for v in values.values()]
            bits = sum(1 << lane for lane, v in values.items() if v)
            common = {"ballot": _int32(bits), "all": all(truths), "any": any(truths),
                      "eq": all(truths) or not any(truths)}[op]
        elif op == "match_all":
            same = len(set(values.values())) == 1
            common = (_int32(sum(1 << lane for lane in values) if same else 0), same)
        pending = self.pending[caller.warp]
        for t in group:
            if op == "syncwarp":
                t.result = None
            elif op in VOTES or op == "match_all":
                t.result = common
            elif op == "match_any":
                t.result = _int32(sum(1 << lane for lane, v in values.items() if v == t.value))
            else:
                t.result = values.get(_source_lane(op, t.lane, int(t.arg)), t.value)
            del pending[t.lane]
            t.state = RUNNABLE
            t.wepoch += 1
            if t is not caller:
                self.queue.append(t)
        if self.clocks is not None:
            self.clocks.join(group)
        if self.checked:
            self.log.segments.extend((len(self.log.keys), caller.linear, caller.wepoch))


def _int32(bits):
    """A 32-bit lane mask as the int32 numba-cuda gives ballot_sync and match_*_sync (lane 31 is the sign)."""
    return np.int32(bits - (1 << 32) if bits >> 31 else bits)


def _lanes(mask):
    return [lane for lane in range(WARP_SIZE) if mask >> lane & 1]


def _source_lane(op, lane, arg):
    if op == "shfl":
        return arg % WARP_SIZE
    if op == "up":
        return lane - arg if lane - arg >= 0 else lane
    if op == "down":
        return lane + arg if lane + arg < WARP_SIZE else lane
    return lane ^ arg
