"""Release and acquire through fences and flags, inside one block of a checked launch: happens-before.

Threads of a block may hand data over without a barrier. The writer writes the data, calls
cuda.threadfence_block() and updates a flag with an atomic; the reader polls the flag with an atomic until it
sees the update, calls cuda.threadfence_block() and reads the data. The two fences, joined by an atomic that
reads what the other atomic wrote, order everything the writer did before its fence before everything the
reader does after its fence: the fence-fence synchronisation of the PTX and C++ memory models. Plain loads and
stores never synchronise, and atomics without fences order nothing but themselves.

Which releases an acquire synchronises with is decided by the value its atomic read: it synchronises with the
release sequence of the write that produced that value. Every cuda.atomic.* is a read-modify-write, and a
chain of read-modify-writes of one element extends the release sequence of each release in it (as in C++20
and PTX), so an atomic that reads an element synchronises with every release on that element that came
before the write it read, and with none after. When 32 producer lanes each add 1 to full[s], a consumer whose
poll read 32 has synchronised with all 32 lanes; one whose poll read 1, only with the lane that added first.
gpusim runs one interleaving at a time, so the write an atomic reads is the last one before it, and an
element's release sequence is what the atomics on it have released so far; which values polls see is the
schedule's to vary (gpusim.schedule).

`Clocks` follows that order with vector clocks. They start at a phase's first fence or first spinning poll
(gpusim.flags) and end at the next barrier, so kernels and phases without flags pay nothing. A thread's row
counts, for every thread of the block, the segments of that thread (the stretches between its fences) it has
synchronised with.
Each logged access carries its thread's segment (in the high bits of the warp epoch); `first_unordered` then
finds the first pair of conflicting accesses in a barrier epoch that neither program order, a warp collective
nor a flag handover orders, and `explain` says which part of the protocol is missing.
"""

import numpy as np

from . import sites
from .arrays import ATOMIC, READ, WRITE
from .context import WARP_SIZE, fmt3
from .errors import ResourceError

SEGMENT_SHIFT = 32
WARP_EPOCH_MASK = (1 << SEGMENT_SHIFT) - 1
MAX_CLOCK_ENTRIES = 1 << 24  # segment rows x threads kept for one barrier epoch (64 MiB)
MIXED_ATOMIC_HINT = (
    "an element that threads update with cuda.atomic.* must be read and written with atomics too, or only "
    "after a cuda.syncthreads(): to wait for a flag that another thread sets, poll it with an atomic such as "
    "cuda.atomic.add(flags, i, 0)."
)


class Clocks:
    """Vector clocks of one block's threads for the current barrier epoch, the release sequence of every
    element atomics touched, and the fences and atomics that moved them (in log order, for explanations)."""

    def __init__(self, threads, log, since_epoch):
        """Clocks that know only the warp collectives so far: a lane that has passed k of them knows the
        accesses its warp's lanes made before the k-th (as `_own` and `_knows` count them)."""
        self.threads = threads
        self.log = log
        self.since_epoch = since_epoch  # the first epoch of the current log that these clocks follow
        n = len(threads)
        wepoch = np.array([t.wepoch & WARP_EPOCH_MASK for t in threads], dtype=np.int64)
        warp = np.arange(n) // WARP_SIZE
        known = np.minimum(wepoch[:, None], wepoch[None, :])
        self.clock = np.where(warp[:, None] == warp[None, :], known, 0).astype(np.int32)
        self.clock[np.arange(n), np.arange(n)] = wepoch + 1
        self.released = [None] * n  # each thread's clock at its last fence: what its next atomic publishes
        self.acquired = [None] * n  # what the flags it read since its last fence published
        self.sequences = {}  # element address -> what its release sequence carries: the join of its releases
        self.rows = []  # segment s (s >= 1) of any thread: its clock, rows[s - 1]
        self.fences = []  # (log entry, thread, code, lasti)
        self.atomics = []  # (log entry, thread, what the write it read carried or None, changed?, value read)

    def close(self):
        """Every thread passed a barrier and the checker has checked the epoch: forget the segments."""
        for thread in self.threads:
            thread.wepoch &= WARP_EPOCH_MASK

    def _segment(self, thread):
        """Start a new segment for `thread` with its current clock."""
        self.rows.append(self.clock[thread.linear].copy())
        if len(self.rows) * len(self.threads) > MAX_CLOCK_ENTRIES:
            raise ResourceError(
                f"the block's threads made {len(self.rows)} fences and warp collectives in one phase between "
                f"barriers, more than gpusim's fence checker follows.",
                "check a smaller problem, or run with check=False.",
            )
        thread.wepoch = len(self.rows) << SEGMENT_SHIFT | thread.wepoch & WARP_EPOCH_MASK

    def fence(self, thread, frame):
        """cuda.threadfence_block() by the running thread: acquire what its atomics read, release the rest."""
        t = thread.linear
        row = self.clock[t]
        if self.acquired[t] is not None:
            np.maximum(row, self.acquired[t], out=row)
            self.acquired[t] = None
        self.released[t] = row.copy()
        row[t] += 1
        where = (frame.f_code, frame.f_lasti) if frame is not None else (None, 0)
        self.fences.append((len(self.log.keys) // 2, t, *where))
        self._segment(thread)
        self.log.segments.extend((len(self.log.keys), t, thread.wepoch))

    def atomic(self, thread, address, changed, seen):
        """An atomic by the running thread (already logged), which read the value `seen` and `changed` it or
        not. It reads the element's last write, so its thread's next fence acquires that write's release
        sequence; being a read-modify-write, it extends the sequence, with the thread's clock at its last
        fence added if it has fenced (a release)."""
        t = thread.linear
        carried = self.sequences.get(address)
        if carried is not None:
            self.acquired[t] = carried if self.acquired[t] is None else np.maximum(self.acquired[t], carried)
        if self.released[t] is not None:
            released = self.released[t]
            self.sequences[address] = released if carried is None else np.maximum(carried, released)
        self.atomics.append((len(self.log.keys) // 2 - 1, t, carried, changed, seen))

    def join(self, group):
        """A completed warp collective orders its lanes' earlier accesses before their later ones."""
        ids = [t.linear for t in group]
        self.clock[ids] = self.clock[ids].max(axis=0)
        self.clock[ids, ids] += 1
        for thread in group:
            self._segment(thread)

    def table(self):
        return np.array(self.rows, dtype=np.int32).reshape(len(self.rows), len(self.threads))


def split_warp_epochs(wepoch):
    """(warp epochs, segments or None) of logged warp-epoch values."""
    segment = wepoch >> SEGMENT_SHIFT
    if not segment.any():
        return wepoch, None
    return wepoch & WARP_EPOCH_MASK, segment


# ------------------------------------------------------------------------------------------ the race check


def _own(table, segment, tid, wepoch):
    """The thread's own count in the segment of each access. Before the thread's first fence or collective
    that the clocks saw, it is one more than the warp collectives the thread had passed."""
    own = wepoch + 1
    later = segment > 0
    own[later] = table[segment[later] - 1, tid[later]]
    return own


def _knows(table, segment, tid, wepoch, of):
    """How many segments of thread `of` the thread of each access had synchronised with. Before its first
    fence or collective that the clocks saw: the warp collectives it had passed, for a lane of its warp."""
    known = np.where(tid == of, wepoch + 1, np.where(tid // WARP_SIZE == of // WARP_SIZE, wepoch, 0))
    later = segment > 0
    known[later] = table[segment[later] - 1, of[later]]
    return known


def _neighbours(mask, group_start, group_end, previous):
    """For each position, the nearest earlier (or later) position of its group where `mask` holds, or -1."""
    n = len(mask)
    positions = np.arange(n)
    if previous:
        marked = np.maximum.accumulate(np.where(mask, positions, -1))
        found = np.concatenate(([-1], marked[:-1]))
        found[found < group_start] = -1
    else:
        marked = np.minimum.accumulate(np.where(mask, positions, n)[::-1])[::-1]
        found = np.concatenate((marked[1:], [n]))
        found[found >= group_end] = -1
    return found


def first_unordered(batch, selected, table):
    """The first pair (earlier, later) of batch indices of conflicting accesses to one element, by different
    threads, in one epoch, that nothing orders; None if every such pair is ordered.

    As in FastTrack, each access is compared with the previous plain write of its element, each plain access
    with the previous atomic, each read with the next write or atomic and each atomic with the next plain
    write: ordered neighbours make every pair ordered, by transitivity.
    """
    index = np.flatnonzero(selected)
    key = batch.epoch[index] << 40 | batch.addr[index]
    order = np.lexsort((index, key))
    index, key = index[order], key[order]
    n = len(index)
    if n < 2:
        return None
    kind, tid = batch.kind[index], batch.tid[index]
    segment = batch.segment[index] if batch.segment is not None else np.zeros(n, dtype=np.int64)
    wepoch = batch.wepoch[index]
    new = np.ones(n, dtype=bool)
    new[1:] = key[1:] != key[:-1]
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    group_start = starts[group]
    group_end = np.append(starts[1:], n)[group]
    plain_write, atomic, read = kind == WRITE, kind == ATOMIC, kind == READ
    positions = np.arange(n)
    pairs = []
    for earlier, later in (
        (_neighbours(plain_write, group_start, group_end, True), positions),
        (np.where(~atomic, _neighbours(atomic, group_start, group_end, True), -1), positions),
        (positions, np.where(read, _neighbours(~read, group_start, group_end, False), -1)),
        (positions, np.where(atomic, _neighbours(plain_write, group_start, group_end, False), -1)),
    ):
        keep = (earlier >= 0) & (later >= 0)
        pairs.append(np.stack((earlier[keep], later[keep]), axis=1))
    pairs = np.concatenate(pairs)
    a, b = pairs[:, 0], pairs[:, 1]
    other = tid[a] != tid[b]
    a, b = a[other], b[other]
    same_warp = tid[a] // WARP_SIZE == tid[b] // WARP_SIZE
    by_warp = same_warp & (wepoch[a] != wepoch[b])
    own = _own(table, segment[a], tid[a], wepoch[a])
    by_flags = own <= _knows(table, segment[b], tid[b], wepoch[b], tid[a])
    unordered = ~(by_warp | by_flags)
    if not unordered.any():
        return None
    a, b = a[unordered], b[unordered]
    first = np.lexsort((index[a], index[b]))[0]
    return int(index[a[first]]), int(index[b[first]])


# ---------------------------------------------------------------------------------------------- the hint


class _Pair:
    """Two unordered accesses, `first` (by thread t) before `second` (by thread u) in the log, and what the
    clocks know about them."""

    def __init__(self, batch, first, second, clocks):
        self.batch, self.first, self.second, self.clocks = batch, first, second, clocks
        self.table = clocks.table()
        self.segment = batch.segment if batch.segment is not None else np.zeros(len(batch.tid), np.int64)
        self.t, self.u = int(batch.tid[first]), int(batch.tid[second])
        self.one, self.other = (fmt3(clocks.threads[x].idx) for x in (self.t, self.u))
        self.did = "wrote" if batch.kind[first] != READ else "read"

    def knows(self, i, of):
        """How many segments of thread `of` the thread of access i had synchronised with."""
        b = self.batch
        return int(_knows(self.table, self.segment[[i]], b.tid[[i]], b.wepoch[[i]], np.array([of]))[0])

    def own(self, i=None):
        """The count the thread of access i (the first access by default) had of its own segments."""
        b, i = self.batch, self.first if i is None else i
        return int(_own(self.table, self.segment[[i]], b.tid[[i]], b.wepoch[[i]])[0])

    def written_before_first(self):
        b, earlier = self.batch, slice(0, self.first)
        same = (b.addr[earlier] == b.addr[self.first]) & (b.epoch[earlier] == b.epoch[self.first])
        return bool((same & (b.kind[earlier] != READ)).any())


def explain(batch, first, second, clocks, place, element):
    """Which part of a flag protocol fails to order access `first` before `second` (batch indices): a
    sentence for the error's hint. `place(entry)` describes the line of a logged access, `element(entry)`
    the element it touched."""
    pair = _Pair(batch, first, second, clocks)
    if (batch.kind[first] == ATOMIC) != (batch.kind[second] == ATOMIC):
        return MIXED_ATOMIC_HINT
    if batch.kind[first] == READ and pair.knows(first, pair.u) >= 1:
        return _reader_first(pair)
    return _refilled(pair, place) or _reader_side(pair, place) or _writer_side(pair, place, element)


def _reader_first(pair):
    """A read, then another thread's write, though the reader had waited for that thread's flag."""
    one, other = pair.one, pair.other
    if not pair.written_before_first():
        return (f"thread {one} read this element before thread {other} wrote it, although it had waited "
                f"for a flag update by {other}: {other} updates the flag before it writes the data. Write "
                f"the data, fence, then update the flag.")
    return (f"thread {other} overwrote this element without first waiting (poll, then fence) for a flag "
            f"update that thread {one} made after reading it: a buffer may be filled again only after its "
            f"reader has released it.")


def _refilled(pair, place):
    """A write into an element whose earlier value (by the same thread) the second thread had waited for:
    the writer refilled a buffer before its reader was done with it."""
    b, first = pair.batch, pair.first
    if b.kind[first] != WRITE:
        return None
    earlier = np.flatnonzero((b.addr[:first] == b.addr[first]) & (b.epoch[:first] == b.epoch[first])
                             & (b.tid[:first] == pair.t) & (b.kind[:first] == WRITE))
    if not len(earlier) or pair.knows(pair.second, pair.t) < pair.own(int(earlier[-1])):
        return None
    one, other = pair.one, pair.other
    return (f"thread {one} wrote this element again before thread {other} had used the value it waited for, "
            f"which {one} wrote at {place(int(earlier[-1]))}: the buffer was refilled before its reader "
            f"released it. Before it writes into a buffer again, {one} must wait (poll, then fence) until "
            f"the reader's flag says the reader is done with the previous round in it, not an earlier one.")


def _reader_side(pair, place):
    """The second thread saw the flag that publishes the first access, but did not fence after it."""
    own, fences = pair.own(), [e for e, thread, *_ in pair.clocks.fences if thread == pair.u]
    for entry, thread, flag, *_ in pair.clocks.atomics:
        if thread == pair.u and entry < pair.second and flag is not None and flag[pair.t] >= own:
            if not any(entry < f <= pair.second for f in fences):
                return (f"thread {pair.other} saw the flag update that publishes this access (its atomic at "
                        f"{place(entry)}) but did not call cuda.threadfence_block() between that atomic and "
                        f"its own access: poll the flag, fence, then use the data.")
    return None


def _writer_side(pair, place, element):
    """What the first thread failed to do after its access: fence, then update a flag the other one polls
    (and the other one waits for that update)."""
    one, other, did, first = pair.one, pair.other, pair.did, pair.first
    fences = [(entry, code, lasti) for entry, thread, code, lasti in pair.clocks.fences
              if thread == pair.t and entry > first]
    updates = [entry for entry, thread, _, changed, _ in pair.clocks.atomics
               if thread == pair.t and changed and entry > first]
    if updates and not any(entry <= updates[0] for entry, *_ in fences):
        return (f"thread {one} updated a flag at {place(updates[0])} after it {did} this element, with no "
                f"cuda.threadfence_block() in between: the fence makes the access visible before the flag "
                f"(access, fence, flag update).")
    if updates:
        early = _early_poll(pair, updates[0])
        if early is not None:
            entry, seen = early
            return (f"thread {other} polled {element(entry)} at {place(entry)} and went on when it read "
                    f"{seen}, before thread {one} updated that flag after this access, at "
                    f"{place(updates[0])}: {other} stopped waiting too soon. Wait until the flag holds the "
                    f"value it reaches once every thread whose data you use has updated it (when 32 lanes "
                    f"each add 1, 32 more per round).")
    if pair.knows(pair.second, pair.t) >= 1:
        return (f"thread {other} synchronised with thread {one} through a flag, but only with an update made "
                f"before {one} {did} this element: {one} must update the flag after the access (access, "
                f"fence, flag), and {other} must wait for the value that update gives (the right round, not "
                f"an earlier one).")
    if not fences:
        return (f"thread {one} never called cuda.threadfence_block() after it {did} this element: publish "
                f"an access with a fence, then a flag update (cuda.atomic.*); the other side polls, fences, "
                f"then accesses.")
    if not updates:
        _, code, lasti = fences[0]
        where = sites.describe(code, lasti) if code is not None else "its fence"
        return (f"thread {one} fenced at {where} after this access but updated no flag after that fence: the "
                f"flag update (cuda.atomic.*) comes after the access and the fence.")
    return (f"thread {other} never polled (with cuda.atomic.*) a flag that thread {one} updated after this "
            f"access: before its access, {other} must wait on the flag element {one} updates, for the value "
            f"that update gives.")


def _early_poll(pair, update):
    """(log entry, value read) of the second thread's last atomic, before its access, on the element that
    the first thread's flag update (at log entry `update`) changed; None if it has none."""
    address = pair.batch.addr[update]
    polls = [(entry, seen) for entry, thread, _, _, seen in pair.clocks.atomics
             if thread == pair.u and entry < pair.second and pair.batch.addr[entry] == address]
    return polls[-1] if polls else None
