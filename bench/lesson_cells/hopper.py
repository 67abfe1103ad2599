"""Lesson 05's Hopper section: the 128-byte swizzle as a picture, the producer/consumer pipeline as a
timeline, a CPU check of the shared-memory layout against the PTX ISA's descriptor semantics, and the
recorded wgmma ladder (bench/gpu_matmul_hopper.py) with its Nsight Compute profile beside cuBLAS's."""

import csv

import matplotlib.pyplot as plt
import numpy as np

from course.kernels import hopper
from gpusim import wgmma_operand

SASS_OPS = ("HGMMA", "UTMALDG", "SYNCS", "LDGSTS", "BAR")
PROFILE_METRICS = ("Duration", "Compute (SM) Throughput", "L2 Cache Throughput", "DRAM Throughput")


def draw_swizzle():
    """One 1024-byte atom (8 rows of 128 bytes = 8 x 8 chunks of 16 bytes): left, where each logical chunk
    (row r, chunk c) would sit without swizzle; right, where the 128-byte swizzle puts it (c XOR r). The
    colour is the logical chunk: one k-range of the 8 rows, what one step of the tensor core reads."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = plt.get_cmap("tab10")
    for ax, swizzled in zip(axes, (False, True), strict=True):
        for row in range(8):
            for chunk in range(8):
                where = hopper.swizzled_offset(row, chunk) - row * 128 if swizzled else chunk * 16
                ax.add_patch(plt.Rectangle((where // 16, 7 - row), 1, 1, color=colours(chunk), alpha=0.55))
                ax.text(where // 16 + 0.5, 7.5 - row, f"k {8 * chunk}-{8 * chunk + 7}", ha="center",
                        va="center", fontsize=6.5)
        ax.set(xlim=(0, 8), ylim=(0, 8), xticks=np.arange(8) + 0.5, yticks=np.arange(8) + 0.5)
        ax.set_xticklabels([f"bytes {16 * i}-{16 * i + 15}" for i in range(8)], fontsize=6.5, rotation=30)
        ax.set_yticklabels([f"row {7 - i}" for i in range(8)], fontsize=7)
        ax.set_title("128-byte swizzle: chunk c of row r at c XOR r" if swizzled else
                     "plain row-major: chunk c at bytes 16c", fontsize=10)
    fig.suptitle("One 8-row atom of a tile of 64 bf16 per row; colour = the 8 k values a chunk holds",
                 fontsize=11)
    fig.tight_layout()
    return fig


def banks_touched(swizzled: bool) -> int:
    """How many of the 8 bank groups (16 bytes each, 128 bytes in all) the 8 rows of one chunk fall in."""
    return len({(hopper.swizzled_offset(row, 0) if swizzled else row * 128) % 128 // 16 for row in range(8)})


def layout_check(rows=128, seed=0):
    """Place a random rows x 64 bf16 tile as the kernels' copies do (swizzled 16-byte chunks), then read every
    64 x 16 operand of every K step back through the descriptor the kernels build, as the PTX ISA defines
    its meaning: the number of elements read back wrong (0 when layout and descriptors agree)."""
    tile = np.random.default_rng(seed).integers(0, 2**16, (rows, 64), dtype=np.uint16)
    shared = np.zeros(rows * 128, np.uint8)
    for row in range(rows):
        for chunk in range(8):
            at = hopper.swizzled_offset(row, chunk)
            shared[at:at + 16] = tile[row, 8 * chunk:8 * chunk + 8].view(np.uint8)
    wrong = 0
    for first in range(0, rows, 64):
        for k in range(4):
            descriptor = hopper.descriptor_fields(first * 128, k).encode()
            read = wgmma_operand(shared, descriptor, 64)
            wrong += int((read != tile[first:first + 64, 16 * k:16 * k + 16]).sum())
    return wrong


def pipeline_timeline(tiles=8, stages=4, copy=3.0, multiply=1.0):
    """Start and end times of a producer that copies K tiles (each `copy` long, several in flight) into
    `stages` buffers and two consumers that multiply them (`multiply` each), as the mbarriers order them:
    a copy may start once its buffer's "empty" barrier has both consumers' arrivals, and a multiply once
    its tile's "full" barrier has all its bytes."""
    copies, products, issued = [], [], 0.0
    for t in range(tiles):
        free = products[t - stages][1] if t >= stages else 0.0  # the empty barrier of its buffer
        start = max(issued, free)
        copies.append((start, start + copy))
        issued = start + 0.1  # one thread issues the next copy right after
        ready = max(copies[t][1], products[t - 1][1] if t else 0.0)  # the full barrier, then in order
        products.append((ready, ready + multiply))
    return copies, products


def draw_pipeline(tiles=8, stages=4):
    copies, products = pipeline_timeline(tiles, stages)
    colours = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(11, 2.8))
    for t, ((c0, c1), (p0, p1)) in enumerate(zip(copies, products, strict=True)):
        ax.barh(1 + 0.12 * (t % stages), c1 - c0, left=c0, height=0.1, color=colours(t % stages))
        ax.text(c0 + 0.05, 1 + 0.12 * (t % stages), f"TMA tile {t} -> buffer {t % stages}", fontsize=6,
                va="center")
        for consumer in range(2):
            ax.barh(-0.3 * consumer, p1 - p0, left=p0, height=0.25, color=colours(t % stages))
            ax.text(p0 + 0.05, -0.3 * consumer, f"wgmma {t}", fontsize=6, va="center")
    ax.set_yticks([1.15, 0, -0.3], ["producer (1 thread)", "consumer warpgroup 1", "consumer warpgroup 2"])
    ax.set_xlabel("time (a copy three times as long as a tile's products; several copies in flight)")
    ax.set_title(f"{stages} buffers: a copy waits for its buffer's 'empty' barrier, the products for 'full'",
                 fontsize=10)
    fig.tight_layout()
    return fig


def _profile(path):
    """{metric: value} of the first kernel in an Nsight Compute CSV, and the kernel's name."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return ({row["Metric Name"]: f"{row['Metric Value']} {row['Metric Unit']}" for row in rows},
            rows[0]["Kernel Name"])


def show_ladder(records):
    """Per device and size: cuBLAS (same layout), the best mma.sync rung and versions 18-20, with their
    fraction of cuBLAS and SASS counts; then the recorded Nsight Compute profile beside cuBLAS's."""
    for record in records:
        print(record.header())
        for n, rows in record.data["sizes"].items():
            timed = [row for row in rows if "ms" in row]
            cublas = min(row["ms"] for row in timed if row["name"].startswith("cuBLAS bf16, A @ Bt"))
            print(f"  n = {n}: cuBLAS {2 * int(n) ** 3 / cublas / 1e9:.0f} TFLOP/s (its best of the run)")
            v16 = next((row["ms"] for row in timed if row["name"].startswith("16 ")), None)
            for row in timed:
                if row["name"].startswith("cuBLAS"):
                    continue
                against_16 = f"{v16 / row['ms']:4.1f} x v16" if v16 else ""
                sass = row.get("sass", {})
                counts = " ".join(f"{op} {sass[op]}" for op in SASS_OPS if sass.get(op))
                print(f"    {row['name']:42} {row['tflops']:6.0f} TFLOP/s "
                      f"{cublas / row['ms']:5.2f} of cuBLAS {against_16}  error {row['rel_err']:.0e}  "
                      f"regs {row.get('regs_per_thread', '-')!s:>4}  {counts}")
        profiles = {who: record.path.parent / f"ncu_gemm_{who}_{record.tag}.csv" for who in ("v19", "cublas")}
        if record.path is not None and all(path.exists() for path in profiles.values()):
            print("  Nsight Compute at 4096 (clocks locked by the profiler):")
            for path in profiles.values():
                values, kernel = _profile(path)
                shown = ", ".join(f"{metric} {values[metric]}" for metric in PROFILE_METRICS
                                  if metric in values)
                print(f"    {kernel.split('[')[0].split('(')[0][:40]:40} {shown}")
