"""Copy bandwidth (lesson 04): PyTorch's device-to-device copy as the ceiling, Numba copies whose warps read
neighbouring floats (coalesced) or floats 32 apart (strided), and two coalesced copies of four elements per
thread, one with its four loads in flight at once and one that loads them one at a time: together they tell
whether the one-element-per-thread copy is short of loads in flight or of something else."""

import math

import torch
from numba import cuda

from bench.common import time_ms

STRIDE = 32
PER_THREAD = 4
THREADS = 256


@cuda.jit
def copy_coalesced(src, dst):
    """Thread i copies element i: a warp reads and writes 32 consecutive floats (128 bytes) at once."""
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


@cuda.jit
def copy_strided(src, dst):
    """Thread i reads element (i % R) * STRIDE + i // R: neighbouring threads read floats STRIDE apart.

    Reading src as an R x STRIDE matrix column by column: each warp load touches 32 different 32-byte
    sectors and uses 4 bytes of each. Writes stay coalesced, so only the reads are wasteful.
    """
    i = cuda.grid(1)
    n = src.size
    if i < n:
        r = n // STRIDE
        dst[i] = src[(i % r) * STRIDE + i // r]


@cuda.jit
def copy_coalesced_4(src, dst):
    """Each thread copies PER_THREAD elements a quarter of the array apart: PER_THREAD independent loads
    in flight per thread, every one of them coalesced across the warp."""
    i = cuda.grid(1)
    quarter = src.size // PER_THREAD
    if i < quarter:
        a = src[i]
        b = src[i + quarter]
        c = src[i + 2 * quarter]
        d = src[i + 3 * quarter]
        dst[i] = a
        dst[i + quarter] = b
        dst[i + 2 * quarter] = c
        dst[i + 3 * quarter] = d


@cuda.jit
def copy_coalesced_4_serial(src, dst):
    """The same four elements per thread as copy_coalesced_4, but each one stored before the next is loaded:
    src and dst may overlap, so no load moves above the store before it, and a thread has one load in flight
    at a time, as in copy_coalesced, with a quarter of its threads."""
    i = cuda.grid(1)
    quarter = src.size // PER_THREAD
    if i < quarter:
        for k in range(PER_THREAD):
            dst[i + k * quarter] = src[i + k * quarter]


COPIES = {  # name -> (what it is, kernel, threads it needs for n elements)
    "torch_d2d_copy": ("torch device-to-device copy (the ceiling)", None, None),
    "numba_copy_coalesced": ("Numba, coalesced, 1 element per thread", copy_coalesced, lambda n: n),
    "numba_copy_coalesced_4_serial": (f"Numba, coalesced, {PER_THREAD} per thread, 1 load at a time",
                                      copy_coalesced_4_serial, lambda n: n // PER_THREAD),
    "numba_copy_coalesced_4": (f"Numba, coalesced, {PER_THREAD} per thread, {PER_THREAD} loads at once",
                               copy_coalesced_4, lambda n: n // PER_THREAD),
    "numba_copy_strided32": (f"Numba, reads {STRIDE} floats apart", copy_strided, lambda n: n),
}


def expected(name, src):
    """What dst must hold after copy `name` of src (a torch tensor)."""
    return src.view(-1, STRIDE).t().reshape(-1) if name == "numba_copy_strided32" else src


def measure(n=1 << 28):
    """GB/s (bytes read + bytes written) of each copy of n float32 (1 GiB by default)."""
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    s, d = cuda.as_cuda_array(src), cuda.as_cuda_array(dst)
    out = dict(bytes_per_pass=2 * n * 4, note="GB/s = (bytes read + bytes written) / time, 1 GB = 1e9 B")
    for name, (_, kernel, threads) in COPIES.items():
        blocks = None if kernel is None else math.ceil(threads(n) / THREADS)

        def fn(kernel=kernel, blocks=blocks):
            if kernel is None:
                dst.copy_(src)
            else:
                kernel[blocks, THREADS](s, d)
        dst.zero_()
        fn()
        torch.cuda.synchronize()
        ok = bool(torch.equal(expected(name, src), dst))
        med, times = time_ms(fn, budget_s=1.0, max_reps=20)
        out[name] = dict(ms=med, GBps=2 * n * 4 / med / 1e6, correct=ok, reps=len(times))
        print(f"{name:24s} {med:8.3f} ms {out[name]['GBps']:8.1f} GB/s correct={ok}", flush=True)
    return out


def show(records):
    """GB/s of every copy on every device, as a fraction of that device's own ceiling."""
    for record in records:
        data = record.data
        ceiling = data["torch_d2d_copy"]["GBps"]
        print(record.header())
        for name, (what, _, _) in COPIES.items():
            if name in data:
                row = data[name]
                print(f"  {what:48} {row['GBps']:7.0f} GB/s  {row['GBps'] / ceiling:4.0%} of the ceiling"
                      + ("" if row.get("correct", True) else "  (WRONG result)"))
        if "numba_copy_strided32" in data:
            slower = data["numba_copy_coalesced"]["GBps"] / data["numba_copy_strided32"]["GBps"]
            # sectors per warp read: 32 when the lanes' floats are STRIDE >= 8 apart, 4 for neighbours
            reads = 32 // (32 * 4 // 32)
            predicted = (reads + 1) / 2
            verdict = ("slower than" if slower > 1.1 * predicted else
                       "about as" if slower > 0.9 * predicted else "faster than")
            print(f"  the strided copy takes {slower:.1f} times as long as the coalesced one; counting "
                  f"sectors alone (reads {reads} times the bytes, writes the same) predicts "
                  f"({reads} + 1) / 2 = {predicted} times: {verdict} predicted")


def show_loads_in_flight(bandwidths, latencies, properties):
    """Little's law for each device with all three recorded: the bytes of loads that must be on their way at
    once for the copy to read at the ceiling's rate (half the ceiling's bytes are reads) for as long as one
    DRAM load takes, per SM, against the most a copy with one 4-byte load per thread can have on their way
    (every resident thread waiting on its load)."""
    latency = {record.device: record.data for record in latencies}
    props = {record.device: record.data for record in properties}
    for record in [*latencies, *properties]:
        print(f"using {record.header()}")
    for record in bandwidths:
        if record.device not in latency or record.device not in props:
            print(f"{record.device}: no load latency recorded for it (bench/results/gpu_lessons_*.json), "
                  f"so no estimate")
            continue
        rows = latency[record.device]["rows"]
        dram_ns = next(row["ns_per_load"] for row in rows if row["level"].startswith("DRAM"))
        device = props[record.device]
        sms, threads = device["multiprocessor_count"], device["max_threads_per_multiprocessor"]
        read_bytes_per_ns = record.data["torch_d2d_copy"]["GBps"] / 2  # GB/s = bytes per ns
        needed = read_bytes_per_ns * dram_ns / sms
        available = threads * 4
        print(f"{record.device}: reading at the ceiling's rate for one DRAM latency ({dram_ns:.0f} ns) needs "
              f"{needed / 1024:.1f} KiB of loads in flight per SM; one 4-byte load per thread gives at most "
              f"{available / 1024:.0f} KiB ({threads} threads), {PER_THREAD} loads per thread "
              f"{PER_THREAD * available / 1024:.0f} KiB")


EXPERIMENT = ("numba_copy_coalesced", "numba_copy_coalesced_4_serial", "numba_copy_coalesced_4")


def show_what_the_copy_lacks(records):
    """For each device with the three coalesced copies: how much of the one-element copy's gap to the ceiling
    closes with a quarter of the threads alone (four elements per thread, one load at a time), and how much
    more with four loads in flight per thread instead of one (the same threads)."""
    for record in records:
        print(record.header())
        missing = [name for name in EXPERIMENT if name not in record.data]
        if missing:
            print(f"  this file has no {', '.join(missing)}: it predates the experiment, so for this device "
                  f"the question stays open")
            continue
        ceiling = record.data["torch_d2d_copy"]["GBps"]
        one, serial, at_once = (record.data[name]["GBps"] / ceiling for name in EXPERIMENT)
        gap = 1 - one
        fewer_threads, more_loads = (serial - one) / gap, (at_once - serial) / gap
        print(f"  of the ceiling: 1 element per thread {one:.0%}; {PER_THREAD} per thread, 1 load at a time "
              f"{serial:.0%}; {PER_THREAD} per thread, {PER_THREAD} loads at once {at_once:.0%}")
        print(f"  of the one-element copy's gap ({gap:.0%} of the ceiling): a quarter of the threads alone "
              f"closes {fewer_threads:.0%}, {PER_THREAD} loads in flight per thread instead of 1 "
              f"{more_loads:.0%}")
        parts = [(more_loads, "loads in flight"), (fewer_threads, "the number of threads")]
        (larger, first), (smaller, second) = sorted(parts, reverse=True)
        print(f"  so the larger part of the gap ({larger:.0%}) goes with {first}, a smaller part "
              f"({smaller:.0%}) with {second}, and {1 - larger - smaller:.0%} is left even with {PER_THREAD} "
              f"loads at once")
