"""The benchmark's FlashAttention versions against PyTorch (lesson 07), read from bench/gpu_attention.py's
results: one version against unfused PyTorch and SDPA, and the whole ladder per device and shape."""

import matplotlib.pyplot as plt
import numpy as np

SIMPLE = "numba 2 smem K/V tiles"
# The last rung first: a device recorded before version 7 existed is compared through version 6.
LAST_RUNGS = ("numba 7 v6 heaviest-first, any N", "numba 6 shfl 1-barrier 256x64 U4")
SHAPE = (16, 4096, 64, False)  # (B*H, N, d, causal) of the comparison in section 6


def last_rung(names):
    """The last rung of the ladder among `names`, or None."""
    return next((name for name in LAST_RUNGS if name in names), None)


def key(row):
    return (row["BH"], row["N"], row["D"], row["causal"])


def describe(shape):
    bh, n, d, causal = shape
    return f"B·H={bh}, N={n}, d={d}, {'causal' if causal else 'full'}"


def rows_of(record, shape=None):
    rows = [row for row in record.data["results"] if "ms" in row]
    return rows if shape is None else [row for row in rows if key(row) == shape]


def show_against_pytorch(records, shape=SHAPE, names=("torch unfused", "torch SDPA", SIMPLE)):
    """Time, TFLOP/s, extra memory and error of `names` at one shape, per device."""
    for record in records:
        rows = {row["name"]: row for row in rows_of(record, shape)}
        print(record.header())
        print(f"  {describe(shape)}, float32, TF32 off")
        for name in names:
            if name in rows:
                row = rows[name]
                print(f"  {name:26s} {row['ms']:8.2f} ms {row['tflops']:6.2f} TFLOP/s  extra memory "
                      f"{row['extra_bytes'] / 2**20:8.1f} MiB  relative error {row['rel_err']:.1e}")
        if {SIMPLE, "torch unfused"} <= rows.keys():
            ratio = rows[SIMPLE]["ms"] / rows["torch unfused"]["ms"]
            print(f"  {SIMPLE} takes {ratio:.2f} times the time of unfused PyTorch")


def show_ladder(records):
    """For each shape: every version's ms and TFLOP/s on every device; then the last rung against PyTorch."""
    shapes = sorted({key(row) for record in records for row in rows_of(record)}, key=lambda s: (s[1], s[3]))
    for record in records:
        print(record.header())
    for shape in shapes:
        print(f"\n{describe(shape)}: ms (TFLOP/s)")
        tables = [{row["name"]: row for row in rows_of(record, shape)} for record in records]
        names = [name for name in dict.fromkeys(n for t in tables for n in t)]
        print(f"  {'version':36}" + "".join(f"{record.tag:>18}" for record in records))
        for name in names:
            cells = "".join(f"{t[name]['ms']:9.2f} ({t[name]['tflops']:5.1f})" if name in t else f"{'-':>18}"
                            for t in tables)
            print(f"  {name:36}{cells}")
    print()
    for record in records:
        for shape in shapes:
            rows = {row["name"]: row for row in rows_of(record, shape)}
            numba = [row for name, row in rows.items() if not name.startswith("torch")]
            if numba:
                print(f"{record.tag}, {describe(shape)}: fastest Numba version: "
                      f"{min(numba, key=lambda row: row['ms'])['name']}")
            last = last_rung(rows)
            if last is not None:
                row = rows[last]
                sdpa = row["ratio_vs_sdpa"]
                verdict = (f"faster than SDPA ({sdpa:.2f} of its time)" if sdpa < 1
                           else f"{sdpa:.2f} times SDPA's time")
                unfused_gib = rows["torch unfused"]["extra_bytes"] / 2**30
                print(f"{record.tag}, {describe(shape)}: version {last.split()[1]} is "
                      f"{row['speedup_vs_unfused']:.2f} times "
                      f"faster than unfused PyTorch and {verdict}; extra memory "
                      f"{row['extra_bytes'] / 2**20:.0f} MiB against {unfused_gib:.1f} GiB unfused")


def show_causal_against_full(records, names=("torch unfused", "torch SDPA", *LAST_RUNGS)):
    """For each device and sequence length: causal time / full time of PyTorch and of the last rungs."""
    for record in records:
        ms = {(row["BH"], row["N"], row["causal"], row["name"]): row["ms"] for row in rows_of(record)}
        for bh, n in sorted({(bh, n) for bh, n, _, _ in ms}, key=lambda shape: shape[1]):
            ratios = [f"{name} {ms[bh, n, True, name] / ms[bh, n, False, name]:.2f}" for name in names
                      if (bh, n, True, name) in ms and (bh, n, False, name) in ms]
            print(f"{record.tag}, B·H={bh}, N={n}: causal time / full time: " + ", ".join(ratios))


def plot_ladder(records):
    """One panel per shape: TFLOP/s of every version, one bar per device (grey labels: PyTorch)."""
    shapes = sorted({key(row) for record in records for row in rows_of(record)}, key=lambda s: (s[1], s[3]))
    names = list(dict.fromkeys(row["name"] for record in records for row in rows_of(record)))
    fig, axes = plt.subplots(1, len(shapes), figsize=(3.9 * len(shapes) + 2, 0.35 * len(names) + 2.4),
                             sharey=True, squeeze=False, layout="constrained")
    height = 0.8 / len(records)
    for ax, shape in zip(axes[0], shapes, strict=True):
        for k, record in enumerate(records):
            values = {row["name"]: row["tflops"] for row in rows_of(record, shape)}
            ax.barh(np.arange(len(names)) + k * height, [values.get(name, 0) for name in names], height,
                    label=record.device)
        ax.set_title(describe(shape), fontsize=9)
        ax.set_xlabel("TFLOP/s (float32)")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(np.arange(len(names)) + height * (len(records) - 1) / 2, names, fontsize=7)
    for label in axes[0][0].get_yticklabels():
        if label.get_text().startswith("torch"):
            label.set_color("dimgrey")
    axes[0][0].invert_yaxis()
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="outside lower center", ncols=len(records))
    fig.suptitle("FlashAttention versions: one colour per device; grey labels are PyTorch", fontsize=10)
    return fig
