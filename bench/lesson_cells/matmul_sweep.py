"""torch.matmul (cuBLAS) throughput against the matrix size (lesson 05, sections 11-13): float32 with TF32
off and float16, and which kernel cuBLAS launched, with what grid, at the sizes around the 1792 cliff."""

import json
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from bench.common import time_ms

DTYPES = ("float32", "float16")
CLIFF = (1792, 1794)
KERNEL_SIZES = (1536, 1760, 1792, 1794, 1824, 1920, 1922, 2048, 2049)


def sizes(quick=False):
    """Every 256 from 1024 to 4096, sizes just off powers of two, every 2 near 1792, every 16 in between."""
    base = range(1024, 4097, 256)
    odd = [1023, 1025, 1537, 2047, 2049, 2050, 2052, 2056, 3071, 3073, 4095, 4097]
    near_cliff = range(1760, 1825, 2)
    sawtooth = range(1600, 2113, 16)
    chosen = sorted({*base, *odd, *near_cliff, *sawtooth})
    return chosen[::4] if quick else chosen


def _matrices(n, dtype):
    a, b = (torch.randn(n, n, device="cuda", dtype=getattr(torch, dtype)) for _ in range(2))
    return a, b, torch.empty_like(a)


def measure(quick=False):
    """{dtype: [{n, ms, tflops}]} for every size, TF32 off."""
    torch.backends.cuda.matmul.allow_tf32 = False
    result = {}
    for dtype in DTYPES:
        result[dtype] = []
        for n in sizes(quick):
            a, b, c = _matrices(n, dtype)
            for _ in range(3):
                torch.matmul(a, b, out=c)
            med, _ = time_ms(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), budget_s=0.1, max_reps=25)
            result[dtype].append(dict(n=n, ms=med, tflops=2.0 * n**3 / med / 1e9))
        print(f"sweep {dtype}: " + " ".join(f"{r['n']}:{r['tflops']:.0f}" for r in result[dtype]), flush=True)
    return result


def kernel_choices(chosen=KERNEL_SIZES):
    """{dtype: [{n, kernels: [{name, us, args}]}]}: the kernels one torch.matmul launched, with the launch
    details torch.profiler records (grid, block, registers, shared memory, blocks per SM, ...)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    result = {}
    for dtype in DTYPES:
        result[dtype] = []
        for n in chosen:
            a, b, c = _matrices(n, dtype)
            torch.matmul(a, b, out=c)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                torch.matmul(a, b, out=c)
                torch.cuda.synchronize()
            handle, path = tempfile.mkstemp(suffix=".json")
            os.close(handle)
            try:
                prof.export_chrome_trace(path)
                with open(path) as f:
                    events = json.load(f)["traceEvents"]
            finally:
                os.remove(path)
            kernels = [dict(name=e["name"], us=e.get("dur"), args=e.get("args", {}))
                       for e in events if e.get("cat") == "kernel"]
            result[dtype].append(dict(n=n, kernels=kernels))
    return result


def measure_all(quick=False):
    """What bench/results/gpu_matmul_sweep_<device>.json holds: the sweep and the kernel choices."""
    return dict(results=measure(quick), kernels=kernel_choices())


def curve(record, dtype):
    rows = record.data["results"][dtype]
    return np.array([r["n"] for r in rows]), np.array([r["tflops"] for r in rows])


def plot(records, dtype, fig=None):
    """TFLOP/s against n for one dtype, a panel per device, coloured by the power of two dividing n
    (drawn into `fig`, a figure or subfigure, if given)."""
    fig = fig or plt.figure(figsize=(6.2 * len(records), 4), layout="constrained")
    axes = fig.subplots(1, len(records), squeeze=False, sharey=True)
    for ax, record in zip(axes[0], records, strict=True):
        n, tflops = curve(record, dtype)
        divisor = np.minimum(n & -n, 64)
        for d, colour in zip((1, 2, 4, 8, 16, 32, 64), plt.cm.viridis(np.linspace(0, 0.95, 7)), strict=True):
            chosen = divisor == d
            if chosen.any():
                ax.plot(n[chosen], tflops[chosen], "o", color=colour, markersize=3.5,
                        label=f"n divisible by {d}" + (" or more" if d == 64 else " (not by more)"))
        ax.set(xlabel="n (an n × n by n × n product)", title=f"{record.device}\n"
               f"{'measured just now' if record.live else 'recorded ' + record.date}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"TFLOP/s, {dtype}" + (" (TF32 off)" if dtype == "float32" else ""))
    axes[0][-1].legend(fontsize=7, markerscale=1.5, loc="lower right")
    fig.suptitle(f"torch.matmul throughput against size, {dtype}")
    return fig


def plot_cliff(records, low=1600, high=2112, fig=None):
    """float32 TFLOP/s from `low` to `high`, every device on one axis, with the 1792 boundary marked."""
    fig = fig or plt.figure(figsize=(9, 3.6), layout="constrained")
    ax = fig.subplots()
    for record, colour in zip(records, plt.cm.tab10.colors, strict=False):
        n, tflops = curve(record, "float32")
        chosen = (n >= low) & (n <= high) & (n % 2 == 0)
        n, tflops = n[chosen], tflops[chosen]
        runs = np.split(np.arange(len(n)), np.flatnonzero(np.diff(n) > 16) + 1)  # no line across gaps
        for k, run in enumerate(runs):
            label = None if k else record.device
            ax.plot(n[run], tflops[run], ".-", color=colour, linewidth=0.8, label=label)
    ax.axvline(1792.5, color="grey", linestyle=":", label="between 1792 and 1794")
    ax.set(xlabel="n (even sizes)", ylabel="TFLOP/s, float32 (TF32 off)",
           title="near the cliff: torch.matmul float32 on each device")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def sheet(records):
    """The three sweep figures on one page (the PNG bench/gpu_sweep.py saves)."""
    page = plt.figure(figsize=(6.2 * len(records) + 1, 12), layout="constrained")
    top, middle, bottom = page.subfigures(3, 1)
    plot(records, "float32", top)
    plot(records, "float16", middle)
    plot_cliff(records, fig=bottom)
    return page


def tflops_at(record, dtype, n):
    return next(r["tflops"] for r in record.data["results"][dtype] if r["n"] == n)


def show_bands(records, from_n=1760):
    """The float16 bands: the range of TFLOP/s of multiples of 8 and of the other sizes, from `from_n` on
    and below it."""
    for record in records:
        n, tflops = curve(record, "float16")
        print(record.header())
        for label, part in ((f"n >= {from_n}", n >= from_n), (f"n < {from_n}", n < from_n)):
            eight, other = tflops[part & (n % 8 == 0)], tflops[part & (n % 8 != 0)]
            print(f"  {label}: multiples of 8 at {eight.min():.0f}-{eight.max():.0f} TFLOP/s, "
                  f"other sizes at {other.min():.0f}-{other.max():.0f}")
        pairs = [(m, m + 1) for m in (1024, 2048, 4096) if {m, m + 1} <= set(n.tolist())]
        print("  " + "; ".join(f"{a}: {tflops_at(record, 'float16', a):.0f}, {b}: "
                               f"{tflops_at(record, 'float16', b):.0f}" for a, b in pairs))


def short_kernel_name(name, width=70):
    return name if len(name) <= width else name[: width - 3] + "..."


def show_cliff(records, sm_counts):
    """For each device: float32 TFLOP/s at 1792 and 1794 and, where recorded, the kernels cuBLAS ran around
    them with their launch (grid, block, registers, shared memory) and blocks per SM (`sm_counts` maps a
    device name to its SM count)."""
    for record in records:
        (a, b), sms = CLIFF, sm_counts.get(record.device)
        ta, tb = (tflops_at(record, "float32", n) for n in CLIFF)
        print(record.header())
        print(f"  float32: {a}: {ta:.1f} TFLOP/s, {b}: {tb:.1f} ({tb / ta - 1:+.0%} for "
              f"{(b / a) ** 3 - 1:+.1%} more work); {sms} SMs")
        choices = record.data.get("kernels")
        if not choices:
            print("  (this file does not record which kernels cuBLAS ran: it predates that measurement)")
            continue
        for dtype in DTYPES:
            print(f"  {dtype}: the kernels one torch.matmul launched")
            for row in choices[dtype]:
                for kernel in row["kernels"]:
                    args = kernel["args"]
                    blocks = int(np.prod(args.get("grid") or [0]))
                    per_sm = f"{blocks / sms:.2f} per SM" if sms else "?"
                    print(f"    n={row['n']:5}: {short_kernel_name(kernel['name'])}\n"
                          f"             grid {args.get('grid')} = {blocks} blocks = {per_sm}, block "
                          f"{args.get('block')}, {args.get('registers per thread')} registers/thread, "
                          f"{args.get('shared memory')} B shared, {kernel['us']} µs")
