"""Lesson 04's memory-traffic claims timed on a GPU: sin²x + cos²x as five kernels or one fused kernel,
three stacked sigmoids with stored or recomputed activations, a shared-memory transpose with an unpadded
(32-wide) or padded (33-wide) tile, and torch.profiler's table of the unfused PyTorch expression.

The kernels are the lesson's own, passed in as a dict (the lesson's globals(), or what
bench/lesson_kernels.py loads from its cells tagged `bench-kernels`).
"""

import math

import torch
from torch.profiler import ProfilerActivity, profile

from bench.common import time_ms

N = 1 << 26  # 256 MiB of float32 per array: far beyond L2
THREADS = 128
PAIRS = {"fusion": ("five kernels", "fused kernel"), "recomputation": ("store activations", "recompute"),
         "transpose": ("tile (32, 32)", "tile (32, 33)")}


def _ms(fn):
    return time_ms(fn, budget_s=0.5, max_reps=15)[0]


def fusion(k, n=N):
    """ms of sin²x + cos²x: PyTorch eager, the lesson's five kernels, its fused kernel."""
    x = torch.rand(n, device="cuda") * 6 - 3
    sin_x, cos_x, sin2, cos2, out = (torch.empty_like(x) for _ in range(5))
    grid = (math.ceil(n / THREADS), THREADS)

    def five_kernels():
        k["sin_kernel"][grid](x, sin_x)
        k["cos_kernel"][grid](x, cos_x)
        k["square_kernel"][grid](sin_x, sin2)
        k["square_kernel"][grid](cos_x, cos2)
        k["add_kernel"][grid](sin2, cos2, out)

    def fused():
        k["fused_kernel"][grid](x, out)

    def torch_eager():
        return torch.sin(x) ** 2 + torch.cos(x) ** 2

    result = {}
    for name, fn in (("torch eager", torch_eager), ("five kernels", five_kernels), ("fused kernel", fused)):
        fn()
        torch.cuda.synchronize()
        result[name] = _ms(fn)
    correct = bool(torch.allclose(out, torch.ones_like(out), atol=1e-5))
    return dict(n=n, ms=result, correct=correct)


def recomputation(k, n=N):
    """ms of forward + backward of sigmoid(sigmoid(sigmoid(x))), activations stored or recomputed."""
    x, dout = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    s1, s2, out, dx = (torch.empty_like(x) for _ in range(4))
    grid = (math.ceil(n / THREADS), THREADS)

    def stored():
        k["forward_store"][grid](x, s1, s2, out)
        k["backward_stored"][grid](dout, s1, s2, dx)

    def recomputed():
        k["forward_recompute"][grid](x, out)
        k["backward_recompute"][grid](x, dout, dx)

    result = {}
    for name, fn in (("store activations", stored), ("recompute", recomputed)):
        fn()
        torch.cuda.synchronize()
        result[name] = _ms(fn)
    return dict(n=n, ms=result)


def transpose(k, size=8192):
    """ms of the lesson's shared-memory transpose of a size x size matrix, tile rows 32 or 33 wide."""
    a = torch.rand(size, size, device="cuda")
    out = torch.empty_like(a)
    tiles = size // 32
    result = {}
    for width in (32, 33):
        kernel = k["make_transpose"](width)
        kernel[(tiles, tiles), (32, 32)](a, out)
        torch.cuda.synchronize()
        result[f"tile (32, {width})"] = _ms(lambda kernel=kernel: kernel[(tiles, tiles), (32, 32)](a, out))
    return dict(size=size, ms=result, correct=bool(torch.equal(out, a.t())))


def show(records, part, predicted, counted):
    """The times of one part (fusion, recomputation or transpose) per device, the slow/fast ratio, and
    the ratio `predicted` from what the lesson's gpusim run counted (`counted` says what)."""
    slow, fast = PAIRS[part]
    for record in records:
        times = record.data["ms"]
        print(record.header())
        print("  " + ", ".join(f"{name} {value:.3f} ms" for name, value in times.items()))
        print(f"  {slow} / {fast}: {times[slow] / times[fast]:.2f} times the time; "
              f"gpusim's {counted}: {predicted:.2f} times")


def profile_unfused(n=1_000_000, on_gpu=True):
    """torch.profiler's table for ten runs of torch.sin(x)**2 + torch.cos(x)**2."""
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    x = torch.randn(n, device="cuda" if on_gpu else "cpu")

    def sin2_cos2(x):
        return torch.sin(x) ** 2 + torch.cos(x) ** 2

    sin2_cos2(x)  # warm-up
    with profile(activities=activities) as prof:
        for _ in range(10):
            sin2_cos2(x)
        if on_gpu:
            torch.cuda.synchronize()
    sort_by = "cuda_time_total" if on_gpu else "cpu_time_total"
    return dict(n=n, table=prof.key_averages().table(sort_by=sort_by, row_limit=10))


def show_profile(records):
    for record in records:
        print(record.header())
        print(record.data["table"])
