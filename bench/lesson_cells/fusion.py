"""Lesson 04's memory-traffic claims timed on a GPU: sin²x + cos²x as five kernels or one fused kernel,
three stacked sigmoids with stored or recomputed activations, a shared-memory transpose with an unpadded
(32-wide) or padded (33-wide) tile, and torch.profiler's table of the unfused PyTorch expression.

The kernels are the lesson's own, passed in as a dict (the lesson's globals(), or what
bench/lesson_kernels.py loads from its cells tagged `bench-kernels`).
"""

import math

import torch
from numba import cuda, float32
from torch.profiler import ProfilerActivity, profile

from bench.common import time_ms

N = 1 << 26  # 256 MiB of float32 per array: far beyond L2
THREADS = 128
PAIRS = {"fusion": ("five kernels", "fused kernel"), "transpose": ("tile (32, 32)", "tile (32, 33)")}


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
    """The times of one part (fusion or transpose) per device, the slow/fast ratio, and
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


def make_sigmoid_kernels(one, per_thread):
    """The lesson's four sigmoid kernels with the constant 1 given as `one` (1.0, a Python float, as the
    lesson first wrote it: Numba then computes in float64; or float32(1.0)), each thread handling
    `per_thread` elements a 1/per_thread of the array apart, all loaded before any is used (loads in
    flight, as bandwidth.copy_coalesced_4). Arrays must have a multiple of per_thread elements."""

    @cuda.jit(device=True)
    def sigmoid(z):
        return one / (one + math.exp(-z))

    @cuda.jit(device=True)
    def gradient(d, a, b, c):
        return d * c * (one - c) * b * (one - b) * a * (one - a)

    @cuda.jit
    def forward_store(x, s1, s2, out):
        i = cuda.grid(1)
        part = x.size // per_thread
        if i < part:
            xs = cuda.local.array(per_thread, float32)
            for k in range(per_thread):
                xs[k] = x[i + k * part]
            for k in range(per_thread):
                a = sigmoid(xs[k])
                b = sigmoid(a)
                s1[i + k * part] = a
                s2[i + k * part] = b
                out[i + k * part] = sigmoid(b)

    @cuda.jit
    def backward_stored(dout, s1, s2, dx):
        i = cuda.grid(1)
        part = dout.size // per_thread
        if i < part:
            ds = cuda.local.array(per_thread, float32)
            a_s = cuda.local.array(per_thread, float32)
            b_s = cuda.local.array(per_thread, float32)
            for k in range(per_thread):
                ds[k] = dout[i + k * part]
                a_s[k] = s1[i + k * part]
                b_s[k] = s2[i + k * part]
            for k in range(per_thread):
                dx[i + k * part] = gradient(ds[k], a_s[k], b_s[k], sigmoid(b_s[k]))

    @cuda.jit
    def forward_recompute(x, out):
        i = cuda.grid(1)
        part = x.size // per_thread
        if i < part:
            xs = cuda.local.array(per_thread, float32)
            for k in range(per_thread):
                xs[k] = x[i + k * part]
            for k in range(per_thread):
                out[i + k * part] = sigmoid(sigmoid(sigmoid(xs[k])))

    @cuda.jit
    def backward_recompute(x, dout, dx):
        i = cuda.grid(1)
        part = x.size // per_thread
        if i < part:
            xs = cuda.local.array(per_thread, float32)
            ds = cuda.local.array(per_thread, float32)
            for k in range(per_thread):
                xs[k] = x[i + k * part]
                ds[k] = dout[i + k * part]
            for k in range(per_thread):
                a = sigmoid(xs[k])
                b = sigmoid(a)
                dx[i + k * part] = gradient(ds[k], a, b, sigmoid(b))

    return dict(forward_store=forward_store, backward_stored=backward_stored,
                forward_recompute=forward_recompute, backward_recompute=backward_recompute,
                per_thread=per_thread)


def recomputation_variants(k, n=N):
    """ms of forward + backward, activations stored or recomputed, for three versions of the kernels: the
    lesson's (float32, one element per thread), the same with float64 constants (as the lesson first wrote
    them), and float32 with four elements per thread loaded at once. Also checks dx against torch."""
    variants = {"lesson's kernels (float32, 1 per thread)": dict(k, per_thread=1),
                "float64 constants (1.0), 1 per thread": make_sigmoid_kernels(1.0, 1),
                "float32, 4 per thread": make_sigmoid_kernels(float32(1.0), 4)}
    x, dout = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    xt = x.double().requires_grad_()
    torch.sigmoid(torch.sigmoid(torch.sigmoid(xt))).backward(dout.double())
    reference = xt.grad
    s1, s2, out, dx = (torch.empty_like(x) for _ in range(4))
    rows = {}
    for label, kernels in variants.items():
        grid = (math.ceil(n / kernels["per_thread"] / THREADS), THREADS)

        def stored(kernels=kernels, grid=grid):
            kernels["forward_store"][grid](x, s1, s2, out)
            kernels["backward_stored"][grid](dout, s1, s2, dx)

        def recomputed(kernels=kernels, grid=grid):
            kernels["forward_recompute"][grid](x, out)
            kernels["backward_recompute"][grid](x, dout, dx)

        row = {}
        for name, fn in (("store activations", stored), ("recompute", recomputed)):
            dx.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            error = ((dx.double() - reference).abs().max() / reference.abs().max()).item()
            row[name] = dict(ms=_ms(fn), max_error=error)
        rows[label] = row
    return dict(n=n, variants=rows)


def show_recomputation_variants(records, predicted):
    """Per device and version: both times and their ratio, against the ratio gpusim's accesses predict."""
    for record in records:
        print(record.header())
        for label, row in record.data["variants"].items():
            store, again = row["store activations"]["ms"], row["recompute"]["ms"]
            print(f"  {label:42} store {store:6.3f} ms, recompute {again:6.3f} ms: store / recompute "
                  f"{store / again:4.2f} (accesses predict {predicted:.2f})")


def rows_and_columns(k, size=8192, blocks=(32, 128)):
    """ms of the lesson's scale kernels (out = 2 a, thread per row or per column) on a size x size matrix,
    for a few block sizes; and, on the same matrix, a coalesced copy against one whose warps read floats 32
    apart (bandwidth.copy_coalesced and copy_strided), in GB/s."""
    from bench.lesson_cells import bandwidth

    a = torch.rand(size, size, device="cuda")
    out = torch.empty_like(a)
    scale = {}
    for threads in blocks:
        for name in ("scale_thread_per_row", "scale_thread_per_column"):
            kernel, grid = k[name], (math.ceil(size / threads), threads)
            kernel[grid](a, out)
            torch.cuda.synchronize()
            ms = _ms(lambda kernel=kernel, grid=grid: kernel[grid](a, out))
            scale[f"{name}, {threads} threads per block"] = ms
    correct = bool(torch.equal(out, 2 * a))
    src, dst = a.view(-1), out.view(-1)
    copies = {}
    for name in ("copy_coalesced", "copy_strided"):
        kernel, grid = getattr(bandwidth, name), (math.ceil(src.numel() / 256), 256)
        kernel[grid](src, dst)
        torch.cuda.synchronize()
        ms = _ms(lambda kernel=kernel, grid=grid: kernel[grid](src, dst))
        copies[name] = dict(ms=ms, GBps=2 * src.numel() * 4 / ms / 1e6)
    return dict(size=size, scale_ms=scale, scale_correct=correct, copies=copies)


def show_rows_and_columns(records, sector_ratio):
    for record in records:
        data = record.data
        print(record.header())
        for name, ms in data["scale_ms"].items():
            print(f"  {name:48} {ms:7.3f} ms")
        for threads in sorted({int(name.split(", ")[1].split()[0]) for name in data["scale_ms"]}):
            row = data["scale_ms"][f"scale_thread_per_row, {threads} threads per block"]
            column = data["scale_ms"][f"scale_thread_per_column, {threads} threads per block"]
            print(f"  {threads:3} threads per block: thread per row takes {row / column:4.2f} times the time "
                  f"of thread per column (gpusim's sectors: {sector_ratio:.0f} times)")
        copies = data["copies"]
        print(f"  copy of the same matrix, coalesced {copies['copy_coalesced']['GBps']:6.0f} GB/s, strided "
              f"{copies['copy_strided']['GBps']:5.0f} GB/s: the strided copy takes "
              f"{copies['copy_strided']['ms'] / copies['copy_coalesced']['ms']:.1f} times as long")


def time_ratios(records, slow, fast):
    """{device: time of `slow` / time of `fast`} from records whose data maps names to ms (fusion,
    transpose: data["ms"]; recomputation_variants: the lesson's kernels; rows_and_columns: the lesson's
    launch of 32-thread blocks)."""
    ratios = {}
    for record in records:
        data = record.data
        if "variants" in data:
            times = {name: row["ms"] for name, row in next(iter(data["variants"].values())).items()}
        elif "scale_ms" in data:
            times = {name.split(",")[0]: ms for name, ms in data["scale_ms"].items()
                     if name.endswith(", 32 threads per block")}
        else:
            times = data["ms"]
        ratios[record.device.replace("NVIDIA ", "")] = times[slow] / times[fast]
    return ratios


def plot_counts_against_time(ax, title, counted, predicted, measured):
    """One bar for the ratio gpusim's counts predict, one per device for the measured time ratio; a dotted
    line at 1 (no difference)."""
    labels = [f"gpusim:\n{counted}"] + [f"{device}:\ntime" for device in measured]
    values = [predicted, *measured.values()]
    bars = ax.bar(range(len(values)), values, color=["tab:grey"] + ["tab:blue"] * len(measured))
    ax.bar_label(bars, fmt="%.2f")
    ax.axhline(1, color="black", linestyle=":", linewidth=1)
    ax.set_xticks(range(len(values)), labels, fontsize=8)
    ax.set_ylim(0, max(values) * 1.2)
    ax.set_title(title, fontsize=10)
