"""The benchmark's matmul versions against cuBLAS (lesson 05, sections 6 and 9), read from
bench/gpu_matmul.py's results: static against dynamic shared memory, and the whole ladder per device."""

import matplotlib.pyplot as plt
import numpy as np

TILED = ("2 tiled16 static", "3 tiled16 dynamic", "4 factory TILE=16")
LADDER = (  # (the row's name in the results, what the lesson calls it)
    ("cuBLAS torch.matmul", "cuBLAS (torch.matmul)"),
    ("1 naive", "1 naive: one thread per output"),
    ("2 tiled16 static", "2 16x16 tiles, static shared memory"),
    ("3 tiled16 dynamic", "3 the same, dynamic shared memory"),
    ("4 factory TILE=16", "4 kernel factory, TILE=16"),
    ("4 factory TILE=32", "4 kernel factory, TILE=32"),
    ("5 coarsened 16x4", "5 thread coarsening, 4 rows per thread"),
    ("6 regtile local 128x128x8 8x8", "6 8x8 register tile, local array"),
    ("7 regtile gen 64x64x8 4x4", "7 4x4 register tile, generated code"),
    ("7 regtile gen 128x128x8 8x8", "7 8x8 register tile, generated code"),
    ("7 regtile gen 128x128x16 8x8", "7 the same, BK=16"),
    ("8 regtile gen 128x128x8 8x8 prefetch", "8 + register prefetch"),
    ("9 regtile vec4 128x128x8 8x8 prefetch", "9 + 16-byte shared loads"),
    ("10 vec4 + unroll2 + max_registers=128", "10 + loads one step ahead, 128 registers"),
    ("17 warp tiles, 256x128x8, 16x8/thread", "17 warp tiles, A transposed, one block per SM"),
)


def rows_by_name(record):
    return {row["name"]: row for row in record.data["results"] if "ms" in row}


def show_tiled(records):
    """Static, dynamic and factory tiles per device, and how many times slower the dynamic one is."""
    for record in records:
        rows = rows_by_name(record)
        meta = record.data["meta"]
        print(record.header())
        print(f"  {meta['n']}³ float32:")
        for name in TILED:
            print(f"    {name:20} {rows[name]['tflops']:6.2f} TFLOP/s")
        slower = rows["2 tiled16 static"]["tflops"] / rows["3 tiled16 dynamic"]["tflops"]
        print(f"  dynamic shared memory with a run-time tile width: {slower:.1f} times slower than static")


def ladder(record):
    """[(label, row)] of the teaching versions found in a record, in teaching order."""
    rows = rows_by_name(record)
    return [(label, rows[name]) for name, label in LADDER if name in rows]


def show_ladder(records):
    """A table: one row per version; for each device TFLOP/s, the fraction of cuBLAS, and the registers and
    bytes of local memory per thread the compiler gave the kernel."""
    print(f"{'version (4096³ float32, TF32 off)':44}" + "".join(f"{record.tag:>30}" for record in records))
    print(f"{'':44}" + f"{'TFLOP/s':>9} {'cuBLAS':>7} {'regs':>5} {'local':>6}" * len(records))
    tables = [dict(ladder(record)) for record in records]
    for _, label in LADDER:
        cells = ""
        for table in tables:
            row = table.get(label)
            if row is None:
                cells += f"{'-':>30}"
                continue
            regs, local = row.get("regs_per_thread", ""), row.get("local_bytes_per_thread", "")
            cells += f"{row['tflops']:9.2f} {row['frac_cublas']:7.0%} {regs!s:>5} {local!s:>6}"
        print(f"{label:44}{cells}")
    for record in records:
        print(record.header())
    for record in records:
        best_label, best = max(ladder(record)[1:], key=lambda item: item[1]["tflops"])
        print(f"{record.tag}: the best Numba version ({best_label}) reaches {best['tflops']:.1f} TFLOP/s, "
              f"{best['frac_cublas']:.2f} of cuBLAS")


def plot_ladder(records):
    """Horizontal bars, one group per version, one bar per device."""
    labels = [label for _, label in LADDER]
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(labels) * max(1, len(records)) ** 0.5 + 1.5))
    height = 0.8 / len(records)
    for k, record in enumerate(records):
        values = {label: row["tflops"] for label, row in ladder(record)}
        y = np.arange(len(labels)) + k * height
        ax.barh(y, [values.get(label, 0) for label in labels], height, label=record.device)
    ax.set_yticks(np.arange(len(labels)) + height * (len(records) - 1) / 2, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="TFLOP/s (4096³ float32, TF32 off)", title="The course's matmul versions against cuBLAS")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
