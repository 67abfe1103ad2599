"""Which thread runs next: the schedules a launch can run under, and the adversarial ones that checks use.

A schedule only matters where a thread hands over: at barriers, warp collectives, polls that spin, flag
updates and (under "delay") fences. The race checks between barriers do not depend on it; what does is what
flags, fences and atomics decide at run time: which value a poll sees, how far ahead of its consumer a
producer gets, which update of an element comes last.

* "sequential" (the default): threads in order, each handing over to the next in line (round robin).
* ("random", seed): a seeded shuffle of the threads at the start of each block and after each barrier.
* ("hold", w): warp w runs only when no thread of another warp can make progress (each has exited, waits at
  a barrier or collective, or spins on a flag that still holds the value it saw), and then a step of each of
  its threads at a time, as a GPU issues an instruction for a whole warp.
* ("ahead", w): warp w runs whenever one of its threads can make progress; the other warps only when none
  can, a step of each of their threads at a time.
* ("delay", w): warp w runs ahead, but each of its threads waits at every fence until no thread of another
  warp can make progress. A consumer then polls as early as it can and uses the data as late as it can; a
  producer writes early and raises its flag late.

`schedules(block)` lists the set a check runs: the default, the adversarial ones of each warp, and a few
random ones.
"""

from typing import NamedTuple

from .context import WARP_SIZE

WARP_KINDS = ("hold", "ahead", "delay")
KINDS = ("sequential", "random", *WARP_KINDS)


class Schedule(NamedTuple):
    """A schedule: `kind` (one of KINDS) and, for "random", its seed, or, for the warp kinds, the warp."""

    kind: str
    value: int | None = None

    @property
    def name(self):
        """How messages name it: `hold warp 1 back`."""
        return {
            "sequential": "sequential",
            "random": f"random (seed {self.value})",
            "hold": f"hold warp {self.value} back",
            "ahead": f"run warp {self.value} ahead",
            "delay": f"delay warp {self.value} at its fences",
        }[self.kind]

    @property
    def meaning(self):
        """One sentence on what the schedule does."""
        w = self.value
        return {
            "sequential": "threads in order, each handing over to the next",
            "random": "threads in a seeded random order, shuffled again after every barrier",
            "hold": f"warp {w} runs only when no other warp can make progress",
            "ahead": f"warp {w} runs whenever it can make progress, the other warps only when it cannot",
            "delay": f"warp {w} runs ahead, but each of its threads waits at every fence until no other warp "
                     f"can make progress",
        }[self.kind]


def as_schedule(schedule, seed=None):
    """The Schedule that `gpusim.jit(schedule=..., seed=...)` asks for, or ValueError."""
    if isinstance(schedule, str):
        schedule = (schedule, seed) if schedule == "random" else (schedule,)
    if not isinstance(schedule, tuple) or not 1 <= len(schedule) <= 2 or schedule[0] not in KINDS:
        raise ValueError(f"schedule must be 'sequential', 'random' (with seed=...), ('random', seed) or "
                         f"(kind, warp) with kind one of {WARP_KINDS}, not {schedule!r}")
    kind, value = schedule[0], schedule[1] if len(schedule) == 2 else None
    if kind in WARP_KINDS and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"schedule ({kind!r}, warp) needs a warp index >= 0, not {value!r}")
    if kind == "sequential" and value is not None:
        raise ValueError("the sequential schedule takes no value")
    return Schedule(kind, value)


def warps_in(block):
    """Warps of a block given as an int or a tuple of 1 to 3 ints."""
    dims = block if isinstance(block, tuple) else (block,)
    threads = 1
    for d in dims:
        threads *= int(d)
    return (threads + WARP_SIZE - 1) // WARP_SIZE


def schedules(block, randoms=3, seed=0):
    """The schedules a check runs a launch of `block` threads under, in the order it tries them: the
    default, the adversarial ones of each warp ("delay" first: its errors name the handover that failed),
    then `randoms` random ones (seeds seed, seed + 1, ...). With two warps, running one ahead is holding the
    other back, so only "hold" is listed; with one warp the warp kinds have nothing to reorder."""
    warps = warps_in(block)
    kinds = () if warps < 2 else ("delay", "hold") if warps == 2 else ("delay", "hold", "ahead")
    return ([Schedule("sequential")] + [Schedule(kind, w) for kind in kinds for w in range(warps)]
            + [Schedule("random", seed + i) for i in range(randoms)])


class Priority:
    """Picks the next thread for a "hold", "ahead" or "delay" schedule (see the module's docstring).

    Threads of rank 0 run one at a time, each until its next hand-over, and are looked at again after every
    step of any thread. Under "hold" and "ahead", threads of rank 1 run in turns: when none of rank 0 can
    move, each thread of rank 1 that can takes one step, and only then are those of rank 0 looked at again
    (a turn of 32 producer lanes wakes a waiting consumer once, not 32 times). Under "delay" they run one at
    a time too, so that a consumer can poll between two producer lanes' updates."""

    def __init__(self, schedule):
        self.warp = schedule.value
        self.held = schedule.kind == "hold"
        self.parks = schedule.kind == "delay"
        self.turns = not self.parks
        self.parked = set()
        self.turn = set()

    def rank(self, thread):
        """0 for a thread that runs first, 1 for one that runs only when no thread of rank 0 can."""
        in_warp = thread.warp == self.warp
        return int(in_warp if self.held else not in_warp)

    def pick(self, queue, stalled):
        """Index in `queue` of the thread to run next: the next one of the current turn, else the first of
        rank 0 that can make progress, else the first of rank 1 that can (starting a turn). A thread cannot
        when it waits at a fence (parked) or when `stalled(thread)` (it spins on a flag that nothing changed
        since its last poll)."""
        turn = self.turn
        if turn:
            for i, thread in enumerate(queue):
                if thread in turn:
                    turn.discard(thread)
                    return i
            turn.clear()
        warp, held, parked = self.warp, self.held, self.parked
        fallback = None
        for i, thread in enumerate(queue):
            if stalled(thread) or parked and thread in parked:
                continue
            if (thread.warp == warp) is not held:  # rank 0, as `rank` says
                return i
            if fallback is None:
                fallback = i
        if fallback is not None:
            if self.turns:
                turn.update(t for t in list(queue)[fallback + 1:]
                            if not stalled(t) and (t.warp == warp) is held)
            return fallback
        if parked:  # nobody else can move: the fences are done
            parked.clear()
            return self.pick(queue, stalled)
        return 0

    def park(self, thread):
        """`thread` reached a fence: True if it must wait there (it is in the delayed warp)."""
        if self.parks and thread.warp == self.warp:
            self.parked.add(thread)
            return True
        return False
