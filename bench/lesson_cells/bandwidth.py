"""Copy bandwidth (lesson 04): PyTorch's device-to-device copy as the ceiling, Numba copies whose warps read
neighbouring floats (coalesced) or floats 32 apart (strided), and a coalesced copy with four independent
loads per thread, which tests whether the one-load-per-thread copy is short of loads in flight."""

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


COPIES = {  # name -> (what it is, kernel, threads it needs for n elements)
    "torch_d2d_copy": ("torch device-to-device copy (the ceiling)", None, None),
    "numba_copy_coalesced": ("Numba, coalesced, 1 element per thread", copy_coalesced, lambda n: n),
    "numba_copy_coalesced_4": (f"Numba, coalesced, {PER_THREAD} elements per thread", copy_coalesced_4,
                               lambda n: n // PER_THREAD),
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
                print(f"  {what:42} {row['GBps']:7.0f} GB/s  {row['GBps'] / ceiling:4.0%} of the ceiling"
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
