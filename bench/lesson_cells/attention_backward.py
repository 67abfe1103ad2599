"""Lesson 07's backward kernel: run it under gpusim against the lesson's NumPy algorithm, and show its
measured time, memory and accuracy against PyTorch autograd (bench/gpu_attention_backward.py's results)."""

import math

import numpy as np

import gpusim
from course.kernels.attention_backward import make_flash_backward


def run_under_gpusim(q, k, v, o, lse, d_o, tile=16, factory=make_flash_backward):
    """dQ, dK, dV of one head from the Numba kernels (version 1 unless `factory` says otherwise),
    simulated race-checked: q, k, v, o, d_o are (N, d), lse (N,).  Returns the gradients and the two
    kernels' reports."""
    n, d = q.shape
    args = [np.ascontiguousarray(x, np.float32)[None] for x in (q, k, v, o, d_o)]
    lse32 = np.asarray(lse, np.float32)[None]
    grads = [np.full((1, n, d), np.nan, np.float32) for _ in range(3)]
    delta = np.zeros((1, n), np.float32)
    launch = factory(d, tile, tile)
    kernels = launch(*args[:4], args[4], lse32, *grads, delta, wrap=gpusim.jit)
    return [g[0] for g in grads], [kernel.report for kernel in kernels]


def show_backward(records):
    """Per device and shape: each method's backward time, its ratio to SDPA's, the worst relative error of
    dQ, dK, dV against float64 with the tolerance, and the memory the forward keeps for it and the
    backward's extra peak."""
    for record in records:
        print(record.header())
        rows = [r for r in record.data["results"] if "ms" in r and not r["name"].startswith("x ")]
        shapes = sorted({(r["BH"], r["N"], r["D"], r["causal"]) for r in rows}, key=lambda s: (s[1], s[3]))
        print(f"  {'shape':28} {'method':44} {'ms':>8} {'x SDPA':>7} {'max err':>8} {'tolerance':>9} "
              f"{'kept MiB':>9} {'extra MiB':>9}")
        for BH, N, D, causal in shapes:
            shape = f"BH={BH} N={N} d={D} {'causal' if causal else 'full'}"
            for r in rows:
                if (r["BH"], r["N"], r["D"], r["causal"]) != (BH, N, D, causal):
                    continue
                print(f"  {shape:28} {r['name']:44} {r['ms']:8.2f} {r.get('ratio_vs_sdpa', math.nan):7.2f} "
                      f"{max(r['rel_err'].values()):8.1e} {r['tolerance']:9.1e} "
                      f"{r['saved_bytes'] / 2**20:9.1f} {r['extra_bytes'] / 2**20:9.1f}")
        for name in sorted({r["name"] for r in rows if r["name"].startswith("numba")}):
            ours = [r for r in rows if r["name"] == name]
            worst = max(max(r["rel_err"].values()) / r["tolerance"] for r in ours)
            ratios = [r["ratio_vs_sdpa"] for r in ours]
            extra = max(r["extra_bytes"] for r in ours) / 2**20
            verdict = "all gradients within tolerance" if worst <= 1 else "A GRADIENT OUTSIDE ITS TOLERANCE"
            print(f"  {name}: {verdict} (worst error / tolerance {worst:.2f}); {min(ratios):.1f} to "
                  f"{max(ratios):.1f} times SDPA's backward time; at most {extra:.1f} MiB extra")
