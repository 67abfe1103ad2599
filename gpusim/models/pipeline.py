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
for every tile, and the steady-state and total times follow from them.
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


def schedule(tiles, load, compute, store=None, buffers=1):
    """Events of `tiles` tiles through load -> compute (-> store) with `buffers` shared buffers, each stage
    starting as early as its inputs, its unit and (for loads) a free buffer allow."""
    if buffers < 1:
        raise ValueError("a pipeline needs at least one buffer")
    events, computed = [], []
    starts = {"load": [], "compute": [], "store": []}

    def begin(role, stage, ready, k):
        """The stage's start for tile k: when its input is ready and its unit can take a new tile."""
        start = max(ready, starts[role][-1] + stage.every) if k else ready
        starts[role].append(start)
        return start

    for k in range(tiles):
        start = begin("load", load, computed[k - buffers] if k >= buffers else 0.0, k)
        events.append(Event(k, load.name, start, start + load.latency, k % buffers))
        start = begin("compute", compute, start + load.latency, k)
        computed.append(start + compute.latency)
        events.append(Event(k, compute.name, start, computed[-1], None))
        if store is not None:
            start = begin("store", store, computed[-1], k)
            events.append(Event(k, store.name, start, start + store.latency, None))
    return events


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
