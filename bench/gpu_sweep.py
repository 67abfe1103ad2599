"""Device properties, memory bandwidth (coalesced vs strided Numba copies, device-to-device ceiling) and
the torch.matmul throughput-vs-size sweep (float32 with TF32 off, and float16).

Usage:  python3 bench/gpu_sweep.py [--out DIR] [--quick]
Writes gpu_props_<dev>.json, gpu_bandwidth_<dev>.json, gpu_matmul_sweep_<dev>.json and .png into --out.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch
from numba import cuda

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_matmul import device_tag, time_ms  # noqa: E402

# ---------------------------------------------------------------------------------------------------------
# device properties
# ---------------------------------------------------------------------------------------------------------


def properties():
    d = cuda.get_current_device()
    p = torch.cuda.get_device_properties(0)
    attrs = [
        "MULTIPROCESSOR_COUNT",
        "MAX_THREADS_PER_BLOCK",
        "MAX_THREADS_PER_MULTIPROCESSOR",
        "WARP_SIZE",
        "MAX_SHARED_MEMORY_PER_BLOCK",
        "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
        "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
        "MAX_REGISTERS_PER_BLOCK",
        "MAX_REGISTERS_PER_MULTIPROCESSOR",
        "CLOCK_RATE",
        "MEMORY_CLOCK_RATE",
        "GLOBAL_MEMORY_BUS_WIDTH",
        "L2_CACHE_SIZE",
        "MAX_BLOCKS_PER_MULTIPROCESSOR",
        "COMPUTE_CAPABILITY_MAJOR",
        "COMPUTE_CAPABILITY_MINOR",
    ]
    out = dict(
        name=torch.cuda.get_device_name(),
        total_memory_bytes=p.total_memory,
        compute_capability=list(d.compute_capability),
    )
    for a in attrs:
        try:
            out[a.lower()] = getattr(d, a)
        except Exception as e:  # noqa: BLE001
            out[a.lower()] = f"n/a ({type(e).__name__})"
    # derived: peak FP32 = SMs * 128 FP32 lanes * 2 flops (FMA) * clock (CLOCK_RATE is in kHz)
    if isinstance(out.get("clock_rate"), int):
        out["derived_fp32_peak_tflops"] = (
            out["multiprocessor_count"] * 128 * 2 * out["clock_rate"] * 1e3 / 1e12
        )
    if isinstance(out.get("memory_clock_rate"), int):
        out["derived_dram_peak_GBps"] = (
            2 * out["memory_clock_rate"] * 1e3 * out["global_memory_bus_width"] / 8 / 1e9
        )
    return out


# ---------------------------------------------------------------------------------------------------------
# bandwidth: the course's two copy kernels
# ---------------------------------------------------------------------------------------------------------

STRIDE = 32


@cuda.jit
def copy_coalesced(src, dst):
    """Thread i copies element i: a warp reads and writes 32 consecutive floats (128 bytes) at once."""
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


@cuda.jit
def copy_strided(src, dst):
    """Thread i reads element (i % R) * STRIDE + i // R: neighbouring threads read floats STRIDE apart.

    Reading src as an R x STRIDE matrix column by column: each warp load touches 32 different 32-byte
    sectors and uses 4 bytes of each.  Writes stay coalesced, so only the reads are wasteful.
    """
    i = cuda.grid(1)
    n = src.size
    if i < n:
        r = n // STRIDE
        dst[i] = src[(i % r) * STRIDE + i // r]


def bandwidth():
    n = 1 << 28  # 1 GiB of float32
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    s, d = cuda.as_cuda_array(src), cuda.as_cuda_array(dst)
    threads = 256
    blocks = (n + threads - 1) // threads
    out = dict(bytes_per_pass=2 * n * 4, note="GB/s = (bytes read + bytes written) / time, 1 GB = 1e9 B")
    for name, fn in [
        ("torch_d2d_copy", lambda: dst.copy_(src)),
        ("numba_copy_coalesced", lambda: copy_coalesced[blocks, threads](s, d)),
        ("numba_copy_strided32", lambda: copy_strided[blocks, threads](s, d)),
    ]:
        fn()
        torch.cuda.synchronize()
        med, times = time_ms(fn, budget_s=1.0, max_reps=20)
        ok = None
        if name == "numba_copy_coalesced" or name == "torch_d2d_copy":
            ok = bool(torch.equal(src, dst))
        elif name == "numba_copy_strided32":
            ok = bool(torch.equal(src.view(-1, STRIDE).t().reshape(-1), dst))
        out[name] = dict(ms=med, GBps=2 * n * 4 / med / 1e6, correct=ok, reps=len(times))
        print(f"{name:24s} {med:8.3f} ms {out[name]['GBps']:8.1f} GB/s correct={ok}", flush=True)
    return out


# ---------------------------------------------------------------------------------------------------------
# torch.matmul throughput vs size
# ---------------------------------------------------------------------------------------------------------


def sweep_sizes(quick):
    base = list(range(1024, 4097, 256))
    odd = [1023, 1025, 1537, 2047, 2049, 2050, 2052, 2056, 3071, 3073, 4095, 4097]
    fine = list(range(1760, 1825, 2))
    sizes = sorted(set(base + odd + fine))
    return sizes[::4] if quick else sizes


def matmul_sweep(quick):
    torch.backends.cuda.matmul.allow_tf32 = False
    res = {}
    for dtype in (torch.float32, torch.float16):
        name = str(dtype).replace("torch.", "")
        res[name] = []
        for n in sweep_sizes(quick):
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            c = torch.empty(n, n, device="cuda", dtype=dtype)
            for _ in range(3):
                torch.matmul(a, b, out=c)
            med, _ = time_ms(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), budget_s=0.15, max_reps=25)
            res[name].append(dict(n=n, ms=med, tflops=2.0 * n**3 / med / 1e9))
        print(f"sweep {name}: " + " ".join(f"{r['n']}:{r['tflops']:.0f}" for r in res[name]), flush=True)
    return res


def plot_sweep(res, dev, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(13, 8))
    for row, (name, data) in enumerate(res.items()):
        n = np.array([r["n"] for r in data])
        t = np.array([r["tflops"] for r in data])
        for col, (lo, hi) in enumerate([(1000, 4200), (1755, 1830)]):
            ax = axes[row, col]
            sel = (n >= lo) & (n <= hi)
            ax.plot(n[sel], t[sel], "-", color="0.7", lw=1)
            for cond, style, label in [
                (n % 64 == 0, "o", "multiple of 64"),
                ((n % 8 == 0) & (n % 64 != 0), "s", "multiple of 8, not 64"),
                ((n % 2 == 0) & (n % 8 != 0), "^", "even, not multiple of 8"),
                (n % 2 == 1, "x", "odd"),
            ]:
                m = sel & cond
                if m.any():
                    ax.plot(n[m], t[m], style, label=label)
            ax.set_xlabel("n (n x n x n)")
            ax.set_ylabel("TFLOP/s")
            ax.set_title(
                f"torch.matmul {name}{' (TF32 off)' if name == 'float32' else ''}"
                f"{'  -- zoom near 1792' if col else ''}"
            )
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle(f"torch.matmul throughput vs size on {dev}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tag, dev = device_tag(), torch.cuda.get_device_name()
    props = properties()
    print(json.dumps(props))
    with open(os.path.join(args.out, f"gpu_props_{tag}.json"), "w") as f:
        json.dump(props, f, indent=1)
    bw = bandwidth()
    bw["device"] = dev
    with open(os.path.join(args.out, f"gpu_bandwidth_{tag}.json"), "w") as f:
        json.dump(bw, f, indent=1)
    res = matmul_sweep(args.quick)
    with open(os.path.join(args.out, f"gpu_matmul_sweep_{tag}.json"), "w") as f:
        json.dump(dict(device=dev, tf32=False, timing="CUDA events, median", results=res), f, indent=1)
    plot_sweep(res, dev, os.path.join(args.out, f"gpu_matmul_sweep_{tag}.png"))


if __name__ == "__main__":
    main()
