"""Lesson 05's tensor-core rung: the m16n8k16 fragment layout as a picture (from gpusim's model of the
instruction), and the measured ladders, float32 on CUDA cores beside bfloat16 on tensor cores, read from
bench/gpu_matmul.py's results (``gpu_matmul`` and ``gpu_matmul_bf16``)."""

import matplotlib.pyplot as plt
import numpy as np

from gpusim import MMA_LAYOUT

BF16_LADDER = (  # (the row's name in the results, what the lesson calls it)
    ("13 mma.sync, Numba loads", "13 mma.sync; fragments by 32-bit loads"),
    ("14 + cp.async, ldmatrix", "14 + cp.async copies, ldmatrix"),
    ("15 + 3-stage pipeline", "15 + 3 shared buffers, 1 barrier per step"),
    ("16 warp tiles 64x64, 4 stages", "16 64x64 warp tiles, 4 buffers"),
)


def draw_fragments():
    """Which lane holds which element of A (16x16), B (16x8) and C (16x8) in mma.sync m16n8k16: each cell
    shows the lane and the register; lanes 4g..4g+3 (one row group g) share a colour."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 5.2), gridspec_kw=dict(width_ratios=[16, 8, 8]))
    colours = plt.get_cmap("tab10")
    for ax, (name, shape, register) in zip(axes, (("A", (16, 16), "a"), ("B", (16, 8), "b"),
                                                  ("C", (16, 8), "c")), strict=True):
        layout = MMA_LAYOUT[name]
        owner = np.zeros(shape, int)
        for lane in range(32):
            for r in range(layout.shape[1]):
                for row, col in layout[lane, r].reshape(-1, 2):
                    owner[row, col] = lane
                    ax.text(col, row, f"{lane}\n{register}{r}", ha="center", va="center", fontsize=5.5)
        ax.imshow(owner // 4, cmap=colours, vmin=0, vmax=9, alpha=0.45)
        ax.set_xticks(range(shape[1]))
        ax.set_yticks(range(shape[0]))
        ax.tick_params(labelsize=7)
        ax.set_title(f"{name} ({shape[0]} x {shape[1]}): lane, register", fontsize=10)
    fig.suptitle("mma.sync m16n8k16: every lane's fragments (colour = row group g = lane // 4)", fontsize=11)
    fig.tight_layout()
    return fig


def _rows(record):
    return {row["name"]: row for row in record.data["results"] if "ms" in row}


def best_fp32(record):
    """(cuBLAS row, best Numba row) of a float32 ladder record."""
    rows = _rows(record)
    cublas = max((r for n, r in rows.items() if n.startswith("cuBLAS")), key=lambda r: r["tflops"])
    numba = max((r for n, r in rows.items() if not n.startswith("cuBLAS")), key=lambda r: r["tflops"])
    return cublas, numba


def bf16_ladder(record):
    """(cuBLAS bf16 row, [(label, row)] of the tensor-core versions) of a bf16 record."""
    rows = _rows(record)
    cublas = max((r for n, r in rows.items() if n.startswith("cuBLAS")), key=lambda r: r["tflops"])
    return cublas, [(label, rows[name]) for name, label in BF16_LADDER if name in rows]


def show_ladders(fp32_records, bf16_records):
    """Per device: the float32 ceiling and best Numba kernel, then the tensor-core versions with their
    fraction of cuBLAS bf16, registers and SASS (HMMA: tensor-core instructions, LDSM: ldmatrix, CALL: a
    linked function that was not inlined)."""
    fp32 = {record.tag: record for record in fp32_records}
    for record in bf16_records:
        print(record.header())
        cublas, versions = bf16_ladder(record)
        peak = record.data["meta"].get("mma_sync_peak_tflops")
        if record.tag in fp32:
            f_cublas, f_best = best_fp32(fp32[record.tag])
            print(f"  float32 (CUDA cores): cuBLAS {f_cublas['tflops']:6.1f} TFLOP/s, best Numba version "
                  f"{f_best['tflops']:6.1f} ({f_best['name']})   [{fp32[record.tag].header()}]")
        alone = f"; mma.sync alone, on registers: {peak:6.1f}" if peak else ""
        print(f"  bfloat16 (tensor cores): cuBLAS {cublas['tflops']:6.1f} TFLOP/s{alone}")
        print(f"  {'version':44} {'TFLOP/s':>8} {'x cuBLAS bf16':>14} {'regs':>5}  SASS")
        for label, row in versions:
            sass = row.get("sass", {})
            counts = " ".join(f"{op} {sass[op]}" for op in ("HMMA", "LDSM", "LDGSTS", "CALL") if op in sass)
            print(f"  {label:44} {row['tflops']:8.1f} {row['tflops'] / cublas['tflops']:14.2f} "
                  f"{row.get('regs_per_thread', '')!s:>5}  {counts}")
        label, best = max(versions, key=lambda item: item[1]["tflops"])
        line = f"  best tensor-core version ({label}): {best['tflops'] / cublas['tflops']:.2f} of cuBLAS bf16"
        if peak:
            line += f", {best['tflops'] / peak:.2f} of mma.sync alone"
        if record.tag in fp32:
            times = best["tflops"] / best_fp32(fp32[record.tag])[1]["tflops"]
            line += f", {times:.1f} times the best float32 kernel"
        print(line)


def plot_ladders(fp32_records, bf16_records):
    """Bars per device: float32 cuBLAS and best Numba, then the tensor-core versions and cuBLAS bf16."""
    fp32 = {record.tag: record for record in fp32_records}
    fig, ax = plt.subplots(figsize=(9, 4.5))
    labels, values, colours = [], [], []
    for record in bf16_records:
        if record.tag in fp32:
            f_cublas, f_best = best_fp32(fp32[record.tag])
            labels += [f"{record.tag} float32 cuBLAS", f"{record.tag} float32 best Numba"]
            values += [f_cublas["tflops"], f_best["tflops"]]
            colours += ["tab:grey", "tab:blue"]
        cublas, versions = bf16_ladder(record)
        labels += [f"{record.tag} {label}" for label, _ in versions] + [f"{record.tag} bf16 cuBLAS"]
        values += [row["tflops"] for _, row in versions] + [cublas["tflops"]]
        colours += ["tab:orange"] * len(versions) + ["tab:grey"]
        peak = record.data["meta"].get("mma_sync_peak_tflops")
        if peak:
            ax.axvline(peak, color="tab:red", linestyle="--", linewidth=1,
                       label=f"{record.tag} mma.sync alone")
    y = np.arange(len(labels))
    ax.barh(y, values, color=colours)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="TFLOP/s at 4096³", title="matmul: float32 on CUDA cores, bfloat16 on tensor cores")
    ax.grid(axis="x", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def show_attention(records):
    """The tensor-core FlashAttention forward against SDPA on bfloat16, per device and shape: times, speed
    relative to SDPA (SDPA's time / ours), share of the data-sheet dense bf16 peak, error of O."""
    for record in records:
        print(record.header())
        peak = record.data["meta"]["peak_bf16_dense_tflops"]
        rows = [r for r in record.data["results"] if "ms" in r]
        print(f"  {'shape':22} {'version':44} {'ms':>7} {'TFLOP/s':>8} {'speed vs SDPA':>13} "
              f"{f'of {peak:.0f}':>8} {'rel err':>8}")
        for r in rows:
            if r["name"].endswith("(again)"):
                continue
            shape = f"BH={r['BH']} N={r['N']} {'causal' if r['causal'] else 'full'}"
            print(f"  {shape:22} {r['name']:44} {r['ms']:7.3f} {r['tflops']:8.1f} "
                  f"{r.get('speed_vs_sdpa', float('nan')):13.2f} {r['frac_peak']:8.2f} {r['rel_err']:8.1e}")
        for name in dict.fromkeys(r["name"] for r in rows if not r["name"].startswith("torch")):
            ours = [r["speed_vs_sdpa"] for r in rows if r["name"] == name]
            print(f"  {name}: {min(ours):.2f} to {max(ours):.2f} of SDPA's speed")
