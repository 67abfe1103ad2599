"""How long one load takes, from shared memory, from L1, from L2 and from DRAM (lessons 00 and 02).

A single thread follows a chain of indices, `j = chain[j]`: every load needs the one before it, so the
time per step is the latency of one load. The chain is one random cycle through the array, so neighbouring
steps land far apart; its size decides where it lives (shared memory, or a global array small enough for
L1, small enough for L2, or far larger than L2). Time per step = (time of 2S steps - time of S steps) / S,
which cancels the launch and the warm-up.
"""

import numpy as np
from numba import cuda, uint64

from bench.common import time_ms

SHARED_CHAIN = 1024  # 8 KiB of uint64 in shared memory

# (level, bytes of the chain, steps S); the DRAM chain is 5x larger than the H100's and H200's 50 MB L2
LEVELS = (
    ("shared memory", SHARED_CHAIN * 8, 1 << 16),
    ("L1 (global, 16 KiB array)", 16 << 10, 1 << 16),
    ("L2 (global, 8 MiB array)", 8 << 20, 1 << 14),
    ("DRAM (global, 256 MiB array)", 256 << 20, 1 << 12),
)


@cuda.jit
def chase_global(chain, start, steps, out):
    """One thread: j = chain[j], `steps` times from `start`; each load waits for the one before."""
    j = uint64(start)
    for _ in range(steps):
        j = chain[j]
    out[0] = j


@cuda.jit
def chase_shared(chain, start, steps, out):
    """The block copies the chain into shared memory, then thread 0 follows it there."""
    local = cuda.shared.array(SHARED_CHAIN, uint64)
    for i in range(cuda.threadIdx.x, SHARED_CHAIN, cuda.blockDim.x):
        local[i] = chain[i]
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        j = uint64(start)
        for _ in range(steps):
            j = local[j]
        out[0] = j


@cuda.jit
def read_all(chain, out):
    """Read every element once (so that a chain smaller than L2 sits in L2); writes nothing real."""
    for i in range(cuda.grid(1), chain.size, cuda.gridsize(1)):
        # never true (chain values are indices); uint64 on both sides, since Numba compares a uint64 with an
        # int64 in float64
        if chain[i] == uint64(chain.size):
            out[0] = chain[i]


def random_cycle(n, seed=0):
    """chain[i] = the next index of one random cycle through all n indices."""
    order = np.random.default_rng(seed).permutation(n).astype(np.uint64)
    chain = np.empty(n, np.uint64)
    chain[order] = np.roll(order, -1)
    return chain


def follow(chain, start, steps):
    """Where `steps` steps of the chain lead from `start` (what the kernels write to out[0])."""
    j = start
    for _ in range(steps):
        j = int(chain[j])
    return j


def measure():
    """Nanoseconds per dependent load at each level, and the SM clock to turn them into cycles.

    Every timed run starts at a new random index, so a chain larger than L2 meets lines no earlier run
    has brought into the caches."""
    rng = np.random.default_rng(1)
    rows = []
    for level, nbytes, steps in LEVELS:
        host = random_cycle(nbytes // 8)
        chain, out = cuda.to_device(host), cuda.device_array(1, np.uint64)
        kernel = chase_shared[1, 256] if level.startswith("shared") else chase_global[1, 1]

        def run(steps, kernel=kernel, chain=chain, out=out, n=host.size):
            start = int(rng.integers(n))
            kernel(chain, start, steps, out)
            return start

        read_all[264, 256](chain, out)
        start = run(2 * steps)  # compiles, warms L1 and L2 where the chain fits, and checks the kernel
        correct = int(out.copy_to_host()[0]) == follow(host, start, 2 * steps)
        times = {s: time_ms(lambda s=s: run(s), budget_s=0.3, max_reps=9)[0] for s in (steps, 2 * steps)}
        ns = (times[2 * steps] - times[steps]) * 1e6 / steps
        rows.append(dict(level=level, bytes=nbytes, steps=steps, ns_per_load=ns, correct=correct))
    return dict(rows=rows, sm_clock_khz=cuda.get_current_device().CLOCK_RATE)


def cycles(row, data):
    return row["ns_per_load"] * data["sm_clock_khz"] * 1e-6


def show(records):
    """One line per level and device: nanoseconds and cycles per load, then how far apart the levels are."""
    for record in records:
        data = record.data
        print(record.header())
        for row in data["rows"]:
            print(f"  {row['level']:30} {row['ns_per_load']:7.1f} ns  {cycles(row, data):6.0f} cycles"
                  + ("" if row["correct"] else "  (WRONG end of chain: do not trust)"))
        level = {row["level"].split()[0]: row for row in data["rows"]}
        shared, l2, dram = level["shared"], level["L2"], level["DRAM"]
        print(f"  a DRAM load takes {dram['ns_per_load'] / shared['ns_per_load']:.0f} times as long as a "
              f"shared-memory load, an L2 hit {l2['ns_per_load'] / shared['ns_per_load']:.0f} times "
              f"(cycles at the {data['sm_clock_khz'] / 1e3:.0f} MHz maximum SM clock)")
