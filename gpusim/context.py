"""Simulated threads: their states, the one running right now, and how messages name them."""

from .sites import describe

RUNNABLE, BARRIER, WARP, DONE = range(4)
WARP_SIZE = 32


class SimThread:
    """One CUDA thread of the block that is running."""

    __slots__ = (
        "idx",
        "linear",
        "warp",
        "lane",
        "glet",
        "state",
        "site",
        "value",
        "arg",
        "mask",
        "result",
        "wepoch",
        "poll",
        "poll_at",
        "poll_where",
        "stall",
        "spinning",
        "watch",
    )

    def __init__(self, idx, linear):
        self.idx = idx
        self.linear = linear
        self.warp, self.lane = divmod(linear, WARP_SIZE)
        self.reset()

    def reset(self):
        """Ready to run in a new block."""
        self.glet = None
        self.state = RUNNABLE
        self.site = self.value = self.arg = self.result = None
        self.mask = 0
        self.wepoch = 0
        self.poll = self.poll_at = self.poll_where = self.stall = None
        self.spinning = False
        self.watch = None


class Current:
    """Set by the scheduler on every switch; read by arrays and the fake `cuda` module."""

    __slots__ = ("thread", "block", "scheduler")

    def __init__(self):
        self.thread = None
        self.block = None
        self.scheduler = None


current = Current()


def fmt3(dim):
    return f"({dim[0]},{dim[1]},{dim[2]})"


def who(thread=None, block=None):
    """`block (0,0,0), thread (3,0,0)` for the running (or the given) thread."""
    thread = thread or current.thread
    block = block or current.block
    if thread is None:
        return "the launch"
    return f"block {fmt3(block)}, thread {fmt3(thread.idx)}"


def thread_list(threads, limit=6):
    """`3 threads (0,0,0), (1,0,0), (2,0,0)` (at most `limit` named)."""
    names = [fmt3(t.idx) for t in threads[:limit]]
    more = f" and {len(threads) - limit} more" if len(threads) > limit else ""
    return f"{len(threads)} thread{'s' if len(threads) != 1 else ''} " + ", ".join(names) + more


def site_text(site):
    """Where a (kind, user stack) barrier or collective site is, for messages."""
    kind, stack = site
    if not stack:
        return kind
    return describe(*stack[0])
