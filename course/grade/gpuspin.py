"""A kernel that keeps a stream busy for a while (imported on a GPU machine, by gputiming.NumbaDevice)."""

from numba import cuda

SPIN_NS = 1_000_000  # cuda.nanosleep sleeps at most about a millisecond per call


@cuda.jit
def spin(rounds):
    """Sleep ``rounds`` times about a millisecond, in one thread."""
    for _ in range(rounds):
        cuda.nanosleep(SPIN_NS)
