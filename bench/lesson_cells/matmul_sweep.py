"""torch.matmul (cuBLAS) throughput against the matrix size (lesson 05, sections 11-13): float32 with TF32
off and float16, and which kernel cuBLAS launched, with what grid, at the sizes around the 1792 cliff."""

import json
import math
import os
import re
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


def show_float32_neighbours(records, around=(1024, 2048, 4096)):
    """float32 TFLOP/s just below, at and just above each power of two: an odd size below costs little (no
    alignment band), one size above costs a row and a column of nearly empty tiles (tile quantization)."""
    for record in records:
        n = set(curve(record, "float32")[0].tolist())
        print(record.header())
        for m in around:
            if not {m - 1, m, m + 1} <= n:
                continue
            below, at, above = (tflops_at(record, "float32", k) for k in (m - 1, m, m + 1))
            print(f"  float32 {m - 1}: {below:5.1f}, {m}: {at:5.1f}, {m + 1}: {above:5.1f} TFLOP/s "
                  f"({below / at - 1:+.0%} one below, {above / at - 1:+.0%} one above)")


def kernel_family(name):
    """A kernel's family and tile from its name: 'xmma 64x64', 'cutlass simt 256x128', 'nvjet 256x128'."""
    family = re.search(r"xmma|nvjet|cutlass_\d+_(?:simt|tensorop)", name)
    tile = re.search(r"(?:tilesize|_)(\d{2,3}x\d{2,3})(?=[x_])", name)
    label = family.group(0).replace("cutlass_80_", "cutlass ").replace("cutlass_75_", "cutlass ") if family \
        else name[:24]
    return f"{label} {tile.group(1)}" if tile else label


def launch_rows(record, dtype, props):
    """One row per size for the recorded kernels of `dtype`: the main kernel's family and tile, grid, blocks,
    blocks resident per SM at once (from the profiler's occupancy estimate), rounds of the SMs, time."""
    sms, warps_per_sm = props["multiprocessor_count"], props["max_threads_per_multiprocessor"] // 32
    rows = []
    for choice in record.data["kernels"][dtype]:
        kernel = max(choice["kernels"], key=lambda k: k["us"] or 0)  # the GEMM, not a helper kernel
        args = kernel["args"]
        grid, threads = args["grid"], int(np.prod(args["block"]))
        blocks = int(np.prod(grid))
        warps = args["est. achieved occupancy %"] / 100 * warps_per_sm
        resident = max(1, round(warps / math.ceil(threads / 32)))
        rows.append(dict(n=choice["n"], name=kernel["name"], family=kernel_family(kernel["name"]), grid=grid,
                         blocks=blocks, resident=resident, rounds=math.ceil(blocks / (resident * sms)),
                         us=kernel["us"], kernels=len(choice["kernels"])))
    return rows


def show_launches(rows, sms):
    print(f"  {'n':>5}  {'kernel (tile)':24} {'grid':>10} {'blocks':>6} {'at once per SM':>14} "
          f"{'rounds on ' + str(sms) + ' SMs':>16} {'µs':>7}")
    for row in rows:
        grid = "x".join(map(str, row["grid"]))
        extra = f" (+{row['kernels'] - 1} helper kernel)" if row["kernels"] > 1 else ""
        print(f"  {row['n']:5}  {row['family']:24} {grid:>10} {row['blocks']:6} {row['resident']:14} "
              f"{row['rounds']:16} {row['us']:7.1f}{extra}")


def read_step(rows):
    """What changed between the two CLIFF sizes, and how time moved between sizes that share a launch."""
    by_n = {row["n"]: row for row in rows}
    (a, b), (ra, rb) = CLIFF, (by_n[n] for n in CLIFF)
    work = (b / a) ** 3 - 1
    print(f"  {a} -> {b}: {rb['us'] / ra['us'] - 1:+.0%} kernel time for {work:+.1%} more work")
    if ra["name"] != rb["name"]:
        print(f"    cuBLAS switched kernels: {ra['family']} -> {rb['family']}")
        return
    (xa, ya, za), (xb, yb, zb) = ra["grid"], rb["grid"]
    print(f"    the same kernel ({ra['family']}); output tiles {xa}x{ya} = {xa * ya} -> {xb}x{yb} = "
          f"{xb * yb} ({xb * yb / (xa * ya) - 1:+.1%} tile work: the new row and column of tiles are nearly "
          f"empty)")
    if zb != za:
        print(f"    the third grid dimension, which for a single product splits K: {za} -> {zb} parts, so "
              f"each output tile's partial sums are combined, and {rb['blocks'] / ra['blocks']:.1f} times as "
              f"many blocks each start up and write out")
    full_a, full_b = ra["rounds"] / za, rb["rounds"] / zb
    verdict = "fewer, so this is no wave cliff" if full_b < full_a else \
        "more, so waves can contribute" if full_b > full_a else "as many, so this is no wave cliff"
    print(f"    rounds of the SMs {ra['rounds']} -> {rb['rounds']}, each 1/{zb} as long at {b}: "
          f"{full_a:.2f} -> {full_b:.2f} full-length rounds, {verdict}")
    same = [(p, q) for p, q in zip(rows, rows[1:], strict=False)
            if p["name"] == q["name"] and p["grid"] == q["grid"]]
    if same:
        print("    time follows the launch, not the work: between sizes with the same kernel and grid, "
              + "; ".join(f"{p['n']} -> {q['n']}: {(q['n'] / p['n']) ** 3 - 1:+.1%} work, "
                          f"{q['us'] / p['us'] - 1:+.1%} time" for p, q in same))


def read_alignment(rows):
    """Which kernel families ran at the sizes divisible by 8 and at the others."""
    for label, chosen in (("multiples of 8", True), ("other sizes", False)):
        families = {}
        for row in rows:
            if (row["n"] % 8 == 0) == chosen:
                families.setdefault(row["family"].split()[0], []).append(row["n"])
        print(f"    {label}: " + "; ".join(f"{family} at {', '.join(map(str, sizes))}"
                                          for family, sizes in families.items()))


def show_cliff(records, device_props):
    """For each device: float32 TFLOP/s at the two CLIFF sizes and, where the sweep recorded them, the kernels
    cuBLAS ran at the sizes around them with their launch, read as tiles, K split and rounds of the SMs
    (`device_props` maps a device name to its recorded properties)."""
    for record in records:
        (a, b), props = CLIFF, device_props.get(record.device)
        ta, tb = (tflops_at(record, "float32", n) for n in CLIFF)
        print(record.header())
        print(f"  float32: {a}: {ta:.1f} TFLOP/s, {b}: {tb:.1f} ({tb / ta - 1:+.0%} for "
              f"{(b / a) ** 3 - 1:+.1%} more work)")
        if not record.data.get("kernels"):
            print("  (this file does not record which kernels cuBLAS ran: it predates that measurement)")
            continue
        if props is None:
            print(f"  (no recorded properties for {record.device}: bench/results/gpu_props_<device>.json)")
            continue
        for dtype in DTYPES:
            rows = launch_rows(record, dtype, props)
            print(f"  {dtype}: the kernel one torch.matmul ran at each size")
            show_launches(rows, props["multiprocessor_count"])
            if dtype == "float32":
                read_step(rows)
            else:
                read_alignment(rows)
