"""A tiled kernel as a pipeline of stages, event by event: load (global to shared memory), compute, store.

Every tile goes through the stages in order. A *stage* is one unit with a `latency` (how long one tile spends
in it) and an `interval` (how soon it can start the next tile): the compute units work on one tile at a
time (interval = latency), while a memory engine can have several transfers in flight (interval < latency:
a new request every `interval`, each done `latency` after it started).

A tile's load needs a free shared-memory buffer. With `buffers` of them, the load of tile k may start only
once tile k - buffers has finished computing and released its buffer:

* 1 buffer: load, wait, compute, load the next one... nothing overlaps;
* 2 buffers (double buffering): tile k + 1 loads while tile k computes;
* more: several loads in flight, which pays when a load's latency is longer than its interval.

Stores write results from registers, so they need no buffer. `schedule` returns every stage's start and end
for every tile, and the steady-state and total times follow from them. `chain` does the same for any number
of stages with buffers between each pair: a dataflow chip's *metapipeline* (SambaNova), where every stage of a
loop body runs at once on its own tile, double buffers between them.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    """One stage of the pipeline: `latency` per tile, a new tile every `interval` (default: latency)."""

    name: str
    latency: float
    interval: float | None = None

    @property
    def every(self):
        return self.latency if self.interval is None else self.interval


@dataclass(frozen=True)
class Event:
    """One tile in one stage."""

    tile: int
    stage: str
    start: float
    end: float
    buffer: int | None  # the shared buffer a load fills (tile % buffers), None for other stages


def chain(tiles, stages, buffers):
    """Events of `tiles` tiles through `stages` in order; buffers[i] is how many buffers sit between stage i
    and stage i + 1 (None: as many as needed, e.g. registers). A stage starts a tile as early as the tile's
    previous stage, its own unit (one new tile every `interval`) and a free output buffer (tile k - B has
    left the next stage) allow."""
    if len(buffers) != len(stages) - 1 or any(b is not None and b < 1 for b in buffers):
        raise ValueError("give one buffer count (at least 1, or None) per link between two stages")
    starts = [[] for _ in stages]
    ends = [[] for _ in stages]
    events = []
    for k in range(tiles):
        ready = 0.0
        for i, stage in enumerate(stages):
            start = ready
            if k:
                start = max(start, starts[i][k - 1] + stage.every)
            slots = buffers[i] if i < len(buffers) else None
            if slots is not None and k >= slots:
                start = max(start, ends[i + 1][k - slots])
            starts[i].append(start)
            ends[i].append(start + stage.latency)
            events.append(Event(k, stage.name, start, start + stage.latency,
                                k % slots if slots is not None else None))
            ready = ends[i][k]
    return events


def schedule(tiles, load, compute, store=None, buffers=1):
    """A tiled kernel: load -> compute (-> store), with `buffers` shared buffers between load and compute
    and none needed between compute and store (results go out from registers)."""
    if buffers < 1:
        raise ValueError("a pipeline needs at least one buffer")
    stages = [load, compute] + ([store] if store is not None else [])
    return chain(tiles, stages, [buffers] + [None] * (len(stages) - 2))


def total_time(events):
    """When the last stage of the last tile ends."""
    return max(e.end for e in events)


def speedup(tiles, load, compute, store=None, buffers=2):
    """How much faster `buffers` buffers finish than one."""
    one = total_time(schedule(tiles, load, compute, store, 1))
    return one / total_time(schedule(tiles, load, compute, store, buffers))


def busy_fraction(events, stage):
    """The share of the total time that `stage` is working on some tile."""
    spans = sorted((e.start, e.end) for e in events if e.stage == stage)
    covered, reach = 0.0, float("-inf")
    for start, end in spans:
        if end > reach:
            covered += end - max(start, reach)
            reach = end
    return covered / total_time(events)
