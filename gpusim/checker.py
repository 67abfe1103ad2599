"""Turns the access log into race, uninitialised-read and cross-block checks, and hands the same arrays
to the counters. The log is checked in batches of whole barrier epochs (at the end of each block, and
before any error inside a block is reported, so the earliest problem wins). Decisions depend only on
the set of accesses in each epoch, never on the order in which the simulator ran the threads."""

from collections import namedtuple

import numpy as np

from . import fences, sites
from .arrays import ATOMIC, KIND_SHIFT, READ, SILENT, SIZE_SHIFT, TAG_SHIFT, WRITE
from .context import WARP_SIZE, fmt3
from .errors import FlagRaceError, RaceError, UninitializedReadError, WriteConflictError
from .memory import OFFSET_MASK, REGION_BITS

_SAME_VALUE = 3  # between blocks: plain writes of the value the element held (see _benign_stores)
_VERBS = {READ: "read", WRITE: "wrote", ATOMIC: "atomically updated", _SAME_VALUE: "wrote"}
_CONFLICTS = {READ: (WRITE, ATOMIC), WRITE: (READ, WRITE, ATOMIC, _SAME_VALUE),
              ATOMIC: (READ, WRITE, _SAME_VALUE), _SAME_VALUE: ()}
_CROSS_BLOCK_HINT = (
    "give each block its own output elements, or combine results with cuda.atomic.* (or a second kernel)."
)


BATCH_ENTRIES = 1 << 17
Access = namedtuple("Access", "block thread array index kind line epoch")
Access.__doc__ = "One recorded element access (gpusim.jit(..., record=True) fills Kernel.trace with these)."
SharedSnapshot = namedtuple("SharedSnapshot", "block epoch arrays")
SharedSnapshot.__doc__ = (
    "The block's shared arrays ({name: copy of the values}) at the end of one phase: after the barrier that "
    "ends epoch `epoch`, or when the block finishes (gpusim.jit(..., record=True) fills Kernel.snapshots)."
)
_EPOCH_SHIFT = 40


def _counts_up_to(starts, n):
    """For each of n entries, how many of the sorted `starts` are at or before it: the number of the segment
    (or epoch) it belongs to, when `starts` are where the second, third, ... begin."""
    return np.bincount(starts[starts < n], minlength=n)[:n].cumsum()


class Accesses:
    """Logged accesses as numpy arrays in log order; `epoch` numbers the barrier epochs of the batch."""

    FIELDS = ("addr", "kind", "tid", "wepoch", "tag", "lasti", "region", "epoch", "silent")
    __slots__ = (*FIELDS, "segment")

    @classmethod
    def from_log(cls, log):
        self = cls()
        keys = np.frombuffer(log.keys, dtype=np.int64)
        pairs = keys[: len(keys) // 2 * 2].reshape(-1, 2)
        element, meta = pairs[:, 0].copy(), pairs[:, 1].copy()
        del keys, pairs
        n = len(element)
        segments = np.frombuffer(log.segments, dtype=np.int64).reshape(-1, 3).copy()
        of_entry = _counts_up_to(segments[1:, 0] // 2, n)  # the segment that made each entry
        self.tid = segments[:, 1][of_entry]
        self.wepoch = segments[:, 2][of_entry]
        self.segment = None
        if len(segments) and (segments[:, 2] >> fences.SEGMENT_SHIFT).any():
            self.wepoch, self.segment = fences.split_warp_epochs(self.wepoch)
        del segments
        self.epoch = _counts_up_to(np.array(log.epoch_ends, dtype=np.int64), n)
        self.addr = element << ((meta >> SIZE_SHIFT) & 7)
        self.kind = (meta >> KIND_SHIFT) & 3
        self.silent = (meta & SILENT) != 0  # writes of the value the element already held
        self.tag = (meta >> TAG_SHIFT) & 0xFF
        self.lasti = meta & 0xFFFF
        self.region = self.addr >> REGION_BITS
        return self

    def part(self, start, stop):
        piece = Accesses()
        for field in self.FIELDS:
            setattr(piece, field, getattr(self, field)[start:stop])
        return piece


def _benign_stores(epoch, entries, undefined=False):
    """Which of one element's accesses in one epoch (in log order) are stores that no order of the threads
    can tell apart: a store of the value the element already held (`silent`), after the last change of the
    element in the epoch (when one thread changed it; none if several did). Every order then leaves the
    element with the same value and shows every reader the same value, as CUDA guarantees when threads
    write one value to one location; they are no race unless gpusim.jit(..., strict=True). Where the element
    held no defined value (`undefined`: shared memory no thread has written), its first store is a change,
    whatever gpusim's zero-filled copy held."""
    kinds, tids, silent = epoch.kind[entries], epoch.tid[entries], epoch.silent[entries]
    stores = np.flatnonzero(kinds == WRITE)
    if undefined and len(stores):
        silent = silent.copy()
        silent[stores[0]] = False
    benign = np.zeros(len(entries), dtype=bool)
    if (kinds == ATOMIC).any():
        return benign
    changes = (kinds == WRITE) & ~silent
    changers = np.unique(tids[changes])
    if len(changers) > 1:
        return benign
    if len(changers) == 0:
        return silent.copy()
    last_change = np.flatnonzero(changes)[-1]
    benign[last_change + 1:] = silent[last_change + 1:]
    return benign


class Checker:
    """Race, uninitialised-read and cross-block checks for one launch; feeds `counters`."""

    def __init__(self, memory, counters, trace=None, strict=False):
        self.memory = memory
        self.counters = counters
        self.trace = trace
        self.strict = strict  # report same-value stores too (see _benign_stores)
        self.epoch_base = 0
        self.block = None
        self.block_dim = None
        self.threads = []
        self.earlier_blocks = {kind: set() for kind in _VERBS}
        self.this_block = {kind: set() for kind in _VERBS}
        self.history = []
        self.clocks = None  # gpusim.fences.Clocks while the block hands data over through flags

    def begin_block(self, block, threads, block_dim):
        self.epoch_base = 0
        self.block = block
        self.threads = threads
        self.block_dim = block_dim
        self.counters.begin_block(len(threads))

    def end_epoch(self):
        """A barrier released the block: close the epoch, and check a batch if the log is long."""
        log = self.memory.log
        log.epoch_ends.append(len(log.keys) // 2)
        if len(log.keys) >= 2 * BATCH_ENTRIES:
            self.flush()

    def end_block(self):
        self.flush()
        self.counters.end_block()
        for kind, addresses in self.this_block.items():
            self.earlier_blocks[kind] |= addresses
            addresses.clear()

    def flush(self):
        """Check and count everything logged so far in this block."""
        log = self.memory.log
        if not log.keys:
            log.clear()
            return
        batch = Accesses.from_log(log)
        log.clear()
        if self.trace is not None:
            self._record(batch)
        shared = self.memory.is_shared[batch.region]
        self.counters.add_threads(batch.tid)
        self._check_races(batch)
        if shared.any():
            self._check_uninitialized(batch, shared)
        if not shared.all():
            self._check_other_blocks(batch, ~shared)
        self.counters.add_batch(batch, shared)

    def _record(self, batch):
        regions, codes = self.memory.regions, self.memory.codes
        fields = ("tid", "region", "addr", "kind", "tag", "lasti", "epoch")
        rows = zip(*(getattr(batch, field).tolist() for field in fields), strict=True)
        for tid, rid, addr, kind, tag, lasti, epoch in rows:
            region = regions[rid]
            index = region.primary.index_of((addr & OFFSET_MASK) - region.primary_offset)
            line = sites.line_of(codes[tag], lasti)
            kind_name = ("read", "write", "atomic")[kind]
            thread = self.threads[tid].idx
            self.trace.append(
                Access(self.block, thread, region.name, index, kind_name, line, self.epoch_base + epoch)
            )
        self.epoch_base += int(batch.epoch[-1]) + 1

    # --- races inside a block ------------------------------------------------------------

    def _check_races(self, epoch):
        written = np.flatnonzero(epoch.kind != READ)
        if not len(written):
            return
        key = epoch.epoch << _EPOCH_SHIFT | epoch.addr
        order = np.argsort(key[written], kind="stable")
        w_key, w_tid = key[written][order], epoch.tid[written][order]
        pos = np.minimum(np.searchsorted(w_key, key), len(w_key) - 1)
        other_thread = (w_key[pos] == key) & (w_tid[pos] != epoch.tid)
        several_writers = (w_key[1:] == w_key[:-1]) & (w_tid[1:] != w_tid[:-1])
        candidates = np.union1d(key[other_thread], w_key[1:][several_writers])
        followed = np.zeros(len(candidates), dtype=bool)
        if self.clocks is not None:
            followed = candidates >> _EPOCH_SHIFT >= self.clocks.since_epoch
        for candidate in candidates[~followed].tolist():
            entries = np.flatnonzero(key == candidate)
            if not self.strict and epoch.silent[entries].any():
                entries = entries[~_benign_stores(epoch, entries, self._undefined_before(epoch, entries))]
            entries = entries[np.argsort(epoch.tid[entries], kind="stable")]
            pair = self._conflicting_pair(epoch, entries)
            if pair is not None:
                raise self._race_error(epoch, entries, *pair)
        if followed.any():
            pair = fences.first_unordered(epoch, np.isin(key, candidates[followed]), self.clocks.table())
            if pair is not None:
                raise self._flag_race_error(epoch, *pair)

    @staticmethod
    def _conflicting_pair(epoch, entries):
        """The first (by thread index) write and a conflicting access by another thread, or None."""
        seen, accesses = set(), []
        for i in entries.tolist():
            key = (int(epoch.tid[i]), int(epoch.kind[i]), int(epoch.wepoch[i]))
            if key not in seen:
                seen.add(key)
                accesses.append((*key, i))
        for tw, kw, ew, iw in accesses:
            if kw == READ:
                continue
            for to, ko, eo, io in accesses:
                if to == tw or (kw == ATOMIC and ko == ATOMIC):
                    continue
                if to // WARP_SIZE == tw // WARP_SIZE and eo != ew:
                    continue
                return iw, io
        return None

    def _only_strict(self, epoch, entries):
        """Is the conflict among these accesses one of same-value stores, reported because strict=True?"""
        if not self.strict or not epoch.silent[entries].any():
            return False
        in_order = np.sort(entries)
        left = in_order[~_benign_stores(epoch, in_order)]
        return self._conflicting_pair(epoch, left[np.argsort(epoch.tid[left], kind="stable")]) is None

    def _access_text(self, epoch, i, of_block=False):
        thread = self.threads[int(epoch.tid[i])].idx
        region = self.memory.regions[int(epoch.region[i])]
        place = sites.describe(self.memory.codes[int(epoch.tag[i])], int(epoch.lasti[i]))
        block = f" of block {fmt3(self.block)}" if of_block else ""
        element = region.element_text(int(epoch.addr[i]) & OFFSET_MASK)
        return f"thread {fmt3(thread)}{block} {_VERBS[int(epoch.kind[i])]} {element} at {place}"

    def _line(self, tag, lasti):
        return tag, sites.line_of(self.memory.codes[tag], lasti)

    def _same_line_writers(self, epoch, entries):
        """Two plain writes of one element by different threads on one line, or None."""
        writes = [i for i in entries.tolist() if epoch.kind[i] == WRITE]
        for a in writes:
            for b in writes:
                if epoch.tid[a] != epoch.tid[b] and self._line(int(epoch.tag[a]), int(epoch.lasti[a])) == \
                        self._line(int(epoch.tag[b]), int(epoch.lasti[b])):
                    return a, b
        return None

    def _race_error(self, epoch, entries, first, second):
        """A conflict inside the block. Two threads writing one element on the same line is an index bug (or
        a missing atomic), so say that; otherwise a barrier between two phases is what is missing."""
        writers = self._same_line_writers(epoch, entries)
        if writers is not None:
            threads = " and ".join(fmt3(self.threads[int(epoch.tid[k])].idx) for k in writers)
            region = self.memory.regions[int(epoch.region[first])]
            element = region.element_text(int(epoch.addr[first]) & OFFSET_MASK)
            w = writers[0]
            place = sites.describe(self.memory.codes[int(epoch.tag[w])], int(epoch.lasti[w]))
            same = (f"; they stored the value {element} already held, which gpusim reports only with "
                    f"strict=True" if self._only_strict(epoch, entries) else "")
            return WriteConflictError(
                f"block {fmt3(self.block)}: threads {threads} both wrote {element} at {place}, with nothing "
                f"to order them{same}."
            )
        same_warp = epoch.tid[first] // WARP_SIZE == epoch.tid[second] // WARP_SIZE
        order = "cuda.syncwarp() or cuda.syncthreads()" if same_warp else "cuda.syncthreads()"
        mixed = ATOMIC in (int(epoch.kind[first]), int(epoch.kind[second]))
        return RaceError(
            f"block {fmt3(self.block)}: {self._access_text(epoch, first)} and "
            f"{self._access_text(epoch, second)} with no {order} between them.",
            fences.MIXED_ATOMIC_HINT if mixed else None,
        )

    def _flag_race_error(self, epoch, first, second):
        """A conflict in an epoch where the block hands data over through flags: the same report, with a hint
        that says which part of the flag protocol does not order the two accesses."""
        if epoch.kind[first] == WRITE == epoch.kind[second] and self._line(
                int(epoch.tag[first]), int(epoch.lasti[first])) == self._line(
                int(epoch.tag[second]), int(epoch.lasti[second])):
            entries = np.array([first, second])
            return self._race_error(epoch, entries, first, second)

        def place(i):
            return sites.describe(self.memory.codes[int(epoch.tag[i])], int(epoch.lasti[i]))

        def element(i):
            return self.memory.regions[int(epoch.region[i])].element_text(int(epoch.addr[i]) & OFFSET_MASK)

        return FlagRaceError(
            f"block {fmt3(self.block)}: {self._access_text(epoch, first)} and "
            f"{self._access_text(epoch, second)}, and nothing orders them: no cuda.syncthreads() between "
            f"them, and no flag handover with fences.",
            fences.explain(epoch, first, second, self.clocks, place, element),
        )

    def _undefined_before(self, epoch, entries):
        """Did the element of these accesses hold no defined value before them: shared memory that no thread
        of the block wrote in an earlier batch or an earlier epoch of this one?"""
        first = int(entries[0])
        region = self.memory.regions[int(epoch.region[first])]
        if region.init is None or region.init[int(epoch.addr[first]) & OFFSET_MASK]:
            return False
        same = epoch.addr == epoch.addr[first]
        return not (same & (epoch.epoch < epoch.epoch[first]) & (epoch.kind != READ)).any()

    # --- uninitialised shared memory -----------------------------------------------------

    def _check_uninitialized(self, epoch, shared):
        """A shared read is fine if the element was written in an earlier epoch, or earlier in this one
        by the reader itself or by a lane that a warp sync orders before it."""
        writes = None
        for rid in np.flatnonzero(np.bincount(epoch.region[shared])).tolist():
            region = self.memory.regions[rid]
            sel = np.flatnonzero(epoch.region == rid)
            offsets, kinds, epochs = epoch.addr[sel] & OFFSET_MASK, epoch.kind[sel], epoch.epoch[sel]
            written = kinds != READ
            first_written = np.where(region.init, -1, len(epoch.epoch))
            np.minimum.at(first_written, offsets[written], epochs[written])
            suspects = sel[(kinds != WRITE) & (first_written[offsets] >= epochs)]
            if len(suspects):
                writes = writes if writes is not None else self._writes_by_address(epoch)
                for i in suspects.tolist():
                    earlier = writes.get((int(epoch.epoch[i]), int(epoch.addr[i])), ())
                    if not self._written_before(epoch, i, earlier, self._followed(epoch, i)):
                        raise UninitializedReadError(
                            f"block {fmt3(self.block)}: {self._access_text(epoch, i)}, but no thread of the "
                            f"block has written that element of shared memory yet."
                        )
            region.init[offsets[written]] = True

    @staticmethod
    def _writes_by_address(epoch):
        """{(epoch, address): [(log position, thread, warp epoch), ...]} of the batch's writes and atomics."""
        positions = np.flatnonzero(epoch.kind != READ)
        writes = {}
        rows = zip(
            epoch.epoch[positions].tolist(),
            epoch.addr[positions].tolist(),
            positions.tolist(),
            epoch.tid[positions].tolist(),
            epoch.wepoch[positions].tolist(),
            strict=True,
        )
        for epoch_number, address, *write in rows:
            writes.setdefault((epoch_number, address), []).append(write)
        return writes

    def _followed(self, epoch, i):
        """Does access i belong to an epoch in which the block hands data over through flags?"""
        return self.clocks is not None and int(epoch.epoch[i]) >= self.clocks.since_epoch

    @staticmethod
    def _written_before(epoch, i, writes, followed=False):
        """Did the reader itself, or a lane ordered before it by a warp sync, write the element first? In an
        epoch with flags, any earlier write counts: the race check has already ordered it, or reported it."""
        tid, wepoch = int(epoch.tid[i]), int(epoch.wepoch[i])
        for position, writer, writer_wepoch in writes:
            if followed and position < i:
                return True
            if writer == tid and position < i:
                return True
            if writer // WARP_SIZE == tid // WARP_SIZE and writer_wepoch < wepoch:
                return True
        return False

    # --- races between blocks ------------------------------------------------------------

    def _check_other_blocks(self, epoch, global_mask):
        """Conflicts with earlier blocks. Unless strict, a block's same-value stores conflict only with later
        blocks' changes: every order of the blocks gives the element the same value."""
        kinds = epoch.kind
        if not self.strict:
            kinds = np.where((kinds == WRITE) & epoch.silent, _SAME_VALUE, kinds)
        for kind, others in _CONFLICTS.items():
            sel = np.flatnonzero(global_mask & (kinds == kind))
            if not len(sel):
                continue
            addresses, first = np.unique(epoch.addr[sel], return_index=True)
            address_list = addresses.tolist()
            for other in others:
                if not self.earlier_blocks[other].isdisjoint(address_list):
                    clash = next(a for a in address_list if a in self.earlier_blocks[other])
                    i = int(sel[first[address_list.index(clash)]])
                    raise self._cross_block_error(epoch, i, other, clash)
            self.this_block[kind].update(address_list)
            keep = sel[first]
            self.history.append(
                (self.block, kind, addresses, epoch.tid[keep], epoch.tag[keep], epoch.lasti[keep])
            )

    def _cross_block_error(self, epoch, i, other_kind, address):
        block, tid, tag, lasti = self._earlier_access(other_kind, address)
        place = sites.describe(self.memory.codes[tag], lasti)
        bx, by, _ = self.block_dim
        thread = fmt3((tid % bx, tid // bx % by, tid // (bx * by)))
        region = self.memory.regions[int(epoch.region[i])]
        element = region.element_text(address & OFFSET_MASK)
        text = (f"{self._access_text(epoch, i, of_block=True)} and thread {thread} of block {fmt3(block)} "
                f"{_VERBS[other_kind]} {element} at {place}; nothing orders two blocks.")
        both_write = other_kind in (WRITE, _SAME_VALUE) and epoch.kind[i] == WRITE
        if both_write and self._line(int(epoch.tag[i]), int(epoch.lasti[i])) == self._line(tag, lasti):
            return WriteConflictError(text)
        return RaceError(text, _CROSS_BLOCK_HINT)

    def _earlier_access(self, kind, address):
        """(block, thread, code tag, offset) of an earlier block's access of `kind` to `address`."""
        for block, logged_kind, addresses, tids, tags, lastis in self.history:
            j = np.searchsorted(addresses, address)
            if logged_kind == kind and block != self.block and j < len(addresses) and addresses[j] == address:
                return block, int(tids[j]), int(tags[j]), int(lastis[j])
        raise AssertionError("an address in earlier_blocks is missing from the history")
