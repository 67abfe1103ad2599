"""Kernels that hand data over through shared-memory flags, right and wrong, for tests/test_gpusim_flags.py.

`make_ring(variant)`: in block b, warp 0 copies tiles of 32 values of row b of x (times 2) into a ring of
SLOTS shared buffers, warp 1 writes them to row b of out. full[s] counts the producer lanes that filled slot
s, empty[s] the consumer lanes that emptied it; each side waits for the other's count with an atomic poll and
a fence.
"""

from numba import cuda, float32, int32

SLOTS = 2
W = 32
VARIANTS = ("right", "no_producer_fence", "no_consumer_fence", "flag_before_data", "consumer_waits_too_long",
            "producer_never_waits", "barrier_after", "consumer_waits_for_one_lane",
            "producer_waits_a_round_early")


def make_ring(variant="right"):
    assert variant in VARIANTS

    @cuda.jit
    def ring_copy(x, out):
        ring = cuda.shared.array((SLOTS, W), float32)
        full = cuda.shared.array(SLOTS, int32)
        empty = cuda.shared.array(SLOTS, int32)
        t = cuda.threadIdx.x
        lane = t % W
        row = cuda.blockIdx.x
        if t < SLOTS:
            full[t] = 0
            empty[t] = 0
        cuda.syncthreads()
        tiles = x.shape[1] // W
        if t < W:
            for k in range(tiles):
                s = k % SLOTS
                if variant != "producer_never_waits":
                    rounds = k // SLOTS - (1 if variant == "producer_waits_a_round_early" else 0)
                    while cuda.atomic.add(empty, s, 0) < W * rounds:
                        pass
                    cuda.threadfence_block()
                if variant == "flag_before_data":
                    cuda.atomic.add(full, s, 1)
                    ring[s, lane] = x[row, k * W + lane] * 2
                    cuda.threadfence_block()
                else:
                    ring[s, lane] = x[row, k * W + lane] * 2
                    if variant != "no_producer_fence":
                        cuda.threadfence_block()
                    cuda.atomic.add(full, s, 1)
        else:
            for k in range(tiles):
                s = k % SLOTS
                rounds = k // SLOTS + (2 if variant == "consumer_waits_too_long" else 1)
                target = W * (rounds - 1) + 1 if variant == "consumer_waits_for_one_lane" else W * rounds
                while cuda.atomic.add(full, s, 0) < target:
                    pass
                if variant != "no_consumer_fence":
                    cuda.threadfence_block()
                out[row, k * W + lane] = ring[s, lane]
                cuda.threadfence_block()
                cuda.atomic.add(empty, s, 1)
        if variant == "barrier_after":
            cuda.syncthreads()
            if t < W:
                ring[0, lane] = out[row, lane]
            else:
                out[row, lane] = ring[0, lane]

    return ring_copy


@cuda.jit
def warp_handover(x, out):
    """Lanes of warp 0 write, sync the warp; lane 0 fences and raises the flag. Lane 0 of warp 1 polls and
    fences, syncs its warp, and every lane reads."""
    buf = cuda.shared.array(W, float32)
    flag = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    lane = t % W
    if t == 0:
        flag[0] = 0
    cuda.syncthreads()
    if t < W:
        buf[lane] = x[lane] + 1
        cuda.syncwarp()
        if lane == 0:
            cuda.threadfence_block()
            cuda.atomic.exch(flag, 0, 1)
    else:
        if lane == 0:
            while cuda.atomic.add(flag, 0, 0) == 0:
                pass
            cuda.threadfence_block()
        cuda.syncwarp()
        out[lane] = buf[lane]


@cuda.jit
def plain_read_spin(out):
    """Thread 0 waits for thread 1's flag with a plain load: it never lets thread 1 run."""
    flag = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        flag[0] = 0
    cuda.syncthreads()
    if t == 0:
        while flag[0] == 0:
            pass
    if t == 1:
        cuda.atomic.exch(flag, 0, 1)
    out[t] = 1


@cuda.jit
def plain_store_flag(x, out):
    """Thread 0 raises the flag with a plain store; thread 32 polls it with an atomic."""
    buf = cuda.shared.array(1, float32)
    flag = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        flag[0] = 0
    cuda.syncthreads()
    if t == 0:
        buf[0] = x[0]
        cuda.threadfence_block()
        flag[0] = 1
    elif t == W:
        while cuda.atomic.add(flag, 0, 0) == 0:
            pass
        cuda.threadfence_block()
        out[0] = buf[0]


@cuda.jit
def waits_for_nobody(out):
    """Warp 1 waits for a flag nobody raises; warp 0 waits at a barrier."""
    flag = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        flag[0] = 0
    cuda.syncthreads()
    if t >= W:
        while cuda.atomic.add(flag, 0, 0) == 0:
            pass
    cuda.syncthreads()
    out[t] = 1


@cuda.jit
def atomic_max_strided(x, out):
    """An ordinary reduction: each thread folds a strided share of x into out[0] with cuda.atomic.max; on a
    constant x most updates leave out[0] unchanged, like a poll, without being one."""
    t = cuda.threadIdx.x
    for i in range(t, x.size, cuda.blockDim.x):
        cuda.atomic.max(out, 0, x[i])


@cuda.jit
def shared_max_strided(x, out):
    """The same in shared memory, then a barrier."""
    best = cuda.shared.array(1, float32)
    t = cuda.threadIdx.x
    if t == 0:
        best[0] = x[0]
    cuda.syncthreads()
    for i in range(t, x.size, cuda.blockDim.x):
        cuda.atomic.max(best, 0, x[i])
    cuda.syncthreads()
    if t == 0:
        out[0] = best[0]
