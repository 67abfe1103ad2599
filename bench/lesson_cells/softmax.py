"""Lesson 06's fused row-softmax kernels timed against torch.softmax on a GPU. The kernels are the
lesson's own (its cells tagged `bench-kernels`), passed in as a dict."""

import torch

from bench.common import time_ms

ROWS, COLS = 8192, 4096


def measure_kernel_only(k, rows=ROWS, cols=COLS):
    """Microseconds, GB/s (one read and one write of the matrix) and max relative error against float64 of the
    lesson's kernels and of torch.softmax, each timed alone (torch's result in a new tensor, nothing copied);
    and two references: torch.softmax followed by a copy into `out` (how an earlier version of this function
    timed it), and a plain copy of the matrix (out.copy_(x)), the fastest any one-read-one-write kernel can
    be."""
    x = (torch.randn(rows, cols, device="cuda") * 30 + 200).float()
    reference = torch.softmax(x.double(), dim=1)
    out = torch.empty_like(x)
    results = {}
    versions = {
        f"softmax_shared ({k['BLOCK']} threads)": lambda: k["softmax_shared"][rows, k["BLOCK"]](x, out),
        f"softmax_warps ({k['BLOCK_W']} threads)": lambda: k["softmax_warps"][rows, k["BLOCK_W"]](x, out),
        "torch.softmax": lambda: torch.softmax(x, dim=1),
        "torch.softmax, then copied into out": lambda: out.copy_(torch.softmax(x, dim=1)),
        "copy (out.copy_(x))": lambda: out.copy_(x),
    }
    moved = 2 * x.numel() * 4
    for name, run in versions.items():
        result = run()
        torch.cuda.synchronize()
        checked = result if name == "torch.softmax" else out
        error = None if name.startswith("copy") else (
            ((checked.double() - reference).abs() / reference.clamp_min(1e-30)).max().item())
        ms, _ = time_ms(run, budget_s=0.5, max_reps=20)
        results[name] = dict(us=ms * 1e3, GBps=moved / ms / 1e6, max_rel_error=error)
    return dict(rows=rows, cols=cols, versions=results)


def show_kernel_only(records):
    """Per device: each version's time and bandwidth, then the lesson's kernels against torch.softmax alone
    and every softmax against the copy."""
    for record in records:
        data = record.data
        versions = data["versions"]
        print(record.header())
        print(f"  {data['rows']} x {data['cols']} float32; GB/s counts one read and one write of the matrix")
        for name, row in versions.items():
            error = "" if row["max_rel_error"] is None else f"  max relative error {row['max_rel_error']:.1e}"
            print(f"  {name:38s} {row['us']:8.1f} µs  {row['GBps']:7.1f} GB/s{error}")
        torch_us, copy = versions["torch.softmax"]["us"], versions["copy (out.copy_(x))"]
        ours = [name for name in versions if name.startswith("softmax_")]
        print("  " + "; ".join(f"{name.split()[0]} takes {versions[name]['us'] / torch_us:.2f} times "
                               f"torch.softmax's time" for name in ours))
        shares = [f"{name.split()[0]} {versions[name]['GBps'] / copy['GBps']:.0%}"
                  for name in ours + ["torch.softmax"]]
        print("  their bandwidth against the copy's: " + ", ".join(shares))
