"""Memory-traffic counters computed from each barrier epoch's access arrays.

A warp-level access is the k-th execution of one load or store site by the lanes of one warp, counted
since the last barrier (where a block's warps reconverge). Sectors and bank conflicts are counted per
warp-level access. When every lane of every warp ran the same sequence of sites (the usual case),
the accesses form a (warps, 32, accesses) cube and are counted without sorting the whole epoch.
"""

import numpy as np

from . import sites
from .arrays import ATOMIC, READ, WRITE
from .context import WARP_SIZE

SECTOR_BYTES = 32
BANK_COUNT = 32
_WORD_BITS = 42

COUNTER_NAMES = (
    "global_loads",
    "global_stores",
    "global_atomics",
    "global_bytes",
    "global_requests",
    "global_sectors",
    "shared_loads",
    "shared_stores",
    "shared_atomics",
    "shared_requests",
    "bank_conflicts",
    "max_thread_accesses",
    "active_threads",
)


def _changes(*sorted_keys):
    """Boolean array marking where any of the (already sorted) keys changes; the first entry is True."""
    new = np.zeros(len(sorted_keys[0]), dtype=bool)
    if len(new):
        new[0] = True
        for key in sorted_keys:
            new[1:] |= key[1:] != key[:-1]
    return new


def _starts(code, offsets):
    """The instruction each offset belongs to; a vector-engine kernel (code None) numbers its sites itself."""
    return offsets if code is None else sites.instruction_starts(code, offsets)


class Counters:
    """Accumulates the counters of one launch."""

    def __init__(self, memory):
        self.memory = memory
        self.values = dict.fromkeys(COUNTER_NAMES, 0)
        self.per_thread = None

    def begin_block(self, nthreads):
        """Start counting the element accesses of each thread of a new block."""
        self.per_thread = np.zeros(nthreads, dtype=np.int64)

    def add_threads(self, tid):
        """Count a batch of accesses against the threads (linear indices in the block) that made them."""
        self.per_thread += np.bincount(tid, minlength=len(self.per_thread))

    def end_block(self):
        """Fold the block's per-thread counts into the work counters: the busiest thread, the threads that
        touched memory."""
        v = self.values
        v["max_thread_accesses"] = max(v["max_thread_accesses"], int(self.per_thread.max(initial=0)))
        v["active_threads"] += int(np.count_nonzero(self.per_thread))

    def add_batch(self, batch, shared):
        """Count a batch of whole barrier epochs (checker.Accesses) and whether each access is to shared
        memory: the access counts at once, requests, sectors and bank conflicts epoch by epoch."""
        v = self.values
        counts = np.bincount(batch.kind + 3 * shared, minlength=6).tolist()
        v["global_loads"] += counts[READ]
        v["global_stores"] += counts[WRITE]
        v["global_atomics"] += counts[ATOMIC]
        v["shared_loads"] += counts[3 + READ]
        v["shared_stores"] += counts[3 + WRITE]
        v["shared_atomics"] += counts[3 + ATOMIC]
        if not shared.all():
            v["global_bytes"] += int(self.memory.itemsizes[batch.region[~shared]].sum())
        site = self._site_keys(batch)
        bounds = np.flatnonzero(np.diff(batch.epoch)) + 1
        tid, addr = batch.tid, batch.addr
        for start, stop in zip([0, *bounds.tolist()], [*bounds.tolist(), len(batch.epoch)], strict=True):
            self._add_epoch(tid[start:stop], addr[start:stop], site[start:stop], shared[start:stop])

    def _add_epoch(self, tid, addr, site, shared):
        """Requests, sectors and bank conflicts of one barrier epoch."""
        if len(tid) > 1 and not (tid[1:] >= tid[:-1]).all():
            order = np.argsort(tid, kind="stable")
            tid, addr, site, shared = tid[order], addr[order], site[order], shared[order]
        if not self._count_aligned(tid, addr, site, shared):
            self._count_general(tid, addr, site, shared)

    def _site_keys(self, epoch):
        """(function tag, instruction offset) of each access as one integer."""
        codes = self.memory.codes
        tag = epoch.tag
        first = int(tag[0])
        if (tag == first).all():
            lasti = _starts(codes[first], epoch.lasti)
        else:
            lasti = epoch.lasti.copy()
            for index in np.unique(tag).tolist():
                sel = tag == index
                lasti[sel] = _starts(codes[index], lasti[sel])
        return tag << 16 | lasti

    def _count_aligned(self, tid, addr, site, shared):
        """Count full warps whose lanes all ran one sequence of sites; False if the epoch is not like that."""
        n = len(tid)
        first, last = int(tid[0]), int(tid[-1])
        lanes = last - first + 1
        if first % WARP_SIZE or lanes % WARP_SIZE or n % lanes:
            return False
        length = n // lanes
        sites = site.reshape(lanes, length)
        if not (tid.reshape(lanes, length) == np.arange(first, last + 1)[:, None]).all():
            return False
        if not (sites == sites[0]).all():
            return False
        cube = addr.reshape(lanes // WARP_SIZE, WARP_SIZE, length)
        is_shared = shared[:length]
        if not is_shared.all():
            sectors = np.sort(cube[:, :, ~is_shared] // SECTOR_BYTES, axis=1)
            requests = sectors.shape[0] * sectors.shape[2]
            self.values["global_sectors"] += requests + int(
                np.count_nonzero(sectors[:, 1:] != sectors[:, :-1])
            )
            self.values["global_requests"] += requests
        if is_shared.any():
            words = cube[:, :, is_shared] // 4
            keyed = np.sort((words % BANK_COUNT) << _WORD_BITS | words, axis=1)
            distinct = np.ones(keyed.shape, dtype=bool)
            distinct[:, 1:] = keyed[:, 1:] != keyed[:, :-1]
            warps, _, columns = keyed.shape
            group = np.arange(warps * columns).reshape(warps, 1, columns)
            bins = (group * BANK_COUNT + (keyed >> _WORD_BITS))[distinct]
            worst = (
                np.bincount(bins, minlength=warps * columns * BANK_COUNT).reshape(-1, BANK_COUNT).max(axis=1)
            )
            self.values["bank_conflicts"] += int(worst.sum()) - warps * columns
            self.values["shared_requests"] += warps * columns
        return True

    def _count_general(self, tid, addr, site, shared):
        """Any epoch: sort accesses by (site, thread) to number each lane's executions of each site."""
        key = site << 10 | tid
        order = np.argsort(key, kind="stable")
        key, addr, shared = key[order], addr[order], shared[order]
        new = _changes(key)
        starts = np.flatnonzero(new)
        group_of = np.cumsum(new) - 1
        k = np.arange(len(key)) - starts[group_of]
        group = ((key >> 10) << 5 | (key & 1023) // WARP_SIZE) << 24 | k
        self._count_sectors(group[~shared], addr[~shared])
        self._count_banks(group[shared], addr[shared])

    def _count_sectors(self, group, addr):
        if not len(group):
            return
        sector = addr // SECTOR_BYTES
        order = np.lexsort((sector, group))
        self.values["global_sectors"] += int(_changes(group[order], sector[order]).sum())
        self.values["global_requests"] += len(np.unique(group))

    def _count_banks(self, group, addr):
        if not len(group):
            return
        word = addr // 4
        order = np.lexsort((word, group))
        group, word = group[order], word[order]
        distinct = _changes(group, word)
        dense = np.cumsum(_changes(group)) - 1
        group_bank = dense[distinct] * BANK_COUNT + word[distinct] % BANK_COUNT
        per_bank, words_in_bank = np.unique(group_bank, return_counts=True)
        starts = np.flatnonzero(_changes(per_bank // BANK_COUNT))
        worst = np.maximum.reduceat(words_in_bank, starts)
        self.values["bank_conflicts"] += int((worst - 1).sum())
        self.values["shared_requests"] += len(starts)
