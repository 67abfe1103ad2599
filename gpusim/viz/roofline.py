"""Roofline: attainable FLOP/s against arithmetic intensity (FLOPs per byte moved), with a kernel's
measured points placed under the roof."""

import numpy as np

from .drawing import new_view


def roofline(points=(), peak_flops=19.5e12, peak_bandwidth=1.555e12, title="Roofline"):
    """Draw the roof min(peak_flops, intensity * peak_bandwidth) and the points, each a dict
    (or tuple) of name, flops, bytes and seconds: its intensity is flops/bytes, its height flops/seconds.
    Defaults are an A100's FP32 peak (19.5 TFLOP/s) and HBM bandwidth (1555 GB/s)."""
    rows = [p if isinstance(p, dict) else dict(zip(("name", "flops", "bytes", "seconds"), p, strict=True))
            for p in points]
    ridge = peak_flops / peak_bandwidth
    intensities = [r["flops"] / r["bytes"] for r in rows]
    low = min([ridge / 100, *[i / 2 for i in intensities]])
    high = max([ridge * 100, *[i * 2 for i in intensities]])
    x = np.logspace(np.log10(low), np.log10(high), 200)
    view = new_view(7, 4.5)
    ax = view.add_subplot()
    ax.loglog(x, np.minimum(peak_flops, x * peak_bandwidth), color="black", linewidth=2)
    ax.axvline(ridge, color="grey", linestyle=":", linewidth=1)
    ax.text(ridge, peak_flops * 1.15, f"ridge: {ridge:.1f} FLOP/byte", ha="center", fontsize=8)
    ax.text(low * 1.3, low * 1.3 * peak_bandwidth * 1.3, "memory-bound", rotation=0, fontsize=8)
    ax.text(ridge * 3, peak_flops * 0.6, "compute-bound", fontsize=8)
    facts = []
    for row, intensity in zip(rows, intensities, strict=True):
        achieved = row["flops"] / row["seconds"]
        bound = min(peak_flops, intensity * peak_bandwidth)
        ax.scatter([intensity], [achieved], zorder=3)
        ax.annotate(f"{row['name']} ({achieved / bound:.0%} of roof)", (intensity, achieved),
                    textcoords="offset points", xytext=(5, -10), fontsize=8)
        facts.append(dict(name=row["name"], intensity=intensity, achieved=achieved, roof=bound,
                          memory_bound=intensity < ridge))
    ax.set_xlabel("arithmetic intensity (FLOPs per byte of memory traffic)")
    ax.set_ylabel("FLOP/s")
    ax.set_ylim(top=peak_flops * 3)
    ax.set_title(title, fontsize=10)
    caption = "; ".join(f"{f['name']}: {f['achieved'] / f['roof']:.0%} of roof" for f in facts)
    view.facts.update(ridge=ridge, points=facts, caption=caption)
    return view
