"""Time the course's Numba FlashAttention kernels against unfused PyTorch and SDPA, float32, TF32 off.

Usage:  python3 bench/gpu_attention.py [--out DIR] [--name NAME] [--explore] [--explore6] [--explore7]
                                      [--quick] [--only A,B] [--causal-only] [--shapes BHxNxD,...]

Shapes: (B*H=16, N=4096, d=64) and (B*H=4, N=16384, d=64), causal and not.  For each version: median time
(CUDA events, after a warm-up call that compiles), TFLOP/s (4*BH*N^2*d flops, half that when causal),
relative error of O against a float64 reference on a random sample of query rows (output poisoned with
NaN first), the max error of the logsumexp, and the extra device memory (peak torch allocation during the
call minus the allocation before it; the Numba kernels receive preallocated O and L and allocate nothing).
Writes <NAME>_<device>.json and .txt into --out (defaults gpu_attention, bench/results).
"""

import argparse
import math
import os
import sys
import time

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from numba import cuda  # noqa: E402

from bench.common import device_name, kernel_resources, time_ms, write_json  # noqa: E402
from course.kernels import attention as at  # noqa: E402
from course.kernels.attention_v7 import make_flash_v7  # noqa: E402

SHAPES = ((16, 4096, 64), (4, 16384, 64))  # (B*H, N, d)


def unfused(q, k, v, causal, mask):
    s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        s.masked_fill_(mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def sdpa(q, k, v, causal):
    """PyTorch's fused attention. It takes (batch, heads, N, d): with 3-D inputs it falls back to its
    unfused math path, so the (BH, N, d) tensors get a batch axis of 1."""
    return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]


def reference(q, k, v, rows, causal):
    """float64 O and logsumexp for the sampled query rows (all heads)."""
    qs = q[:, rows].double()
    s = torch.matmul(qs, k.double().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        kidx = torch.arange(q.shape[1], device=q.device)
        s.masked_fill_(kidx[None, None, :] > rows[None, :, None], float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.matmul(torch.softmax(s, dim=-1), v.double())
    return o, lse


def versions(causal, explore, explore6=False, explore7=False):
    """(name, launch) of every Numba version for head dimension 64, in teaching order."""
    D = 64
    v = [
        ("numba 1 row-per-thread", at.make_flash_row(D, causal)),
        ("numba 2 smem K/V tiles", at.make_flash_smem(D, 64, causal)),
        ("numba 3 regtile 64x64 8x4", at.make_flash_regtile(D, 64, 64, 16, 8, causal)),
        ("numba 4 regtile-v4 64x64 8x4", at.make_flash_regtile_v4(D, 64, 64, 16, 8, causal)),
        ("numba 5 regtile-v4 128x64 8x8 U4", at.make_flash_regtile_v4(D, 128, 64, 8, 16, causal, UNROLL=4)),
        ("numba 6 shfl 1-barrier 256x64 U4", at.make_flash_v6(D, 256, 64, 8, 32, causal, UNROLL=4)),
        ("numba 7 v6 heaviest-first, any N", make_flash_v7(D, 256, 64, 8, 32, causal, UNROLL=4)),
    ]
    if explore:
        v += [
            ("x5 v4 BQ=256 TX=8 TY=32 8x8 U2", at.make_flash_regtile_v4(D, 256, 64, 8, 32, causal, UNROLL=2)),
            ("x5 v4 BQ=128 TY=16 8x4 U4", at.make_flash_regtile_v4(D, 128, 64, 16, 16, causal, UNROLL=4)),
        ]
    if explore6:
        v += [
            ("x6 256x64 U2", at.make_flash_v6(D, 256, 64, 8, 32, causal, UNROLL=2)),
            ("x6 256x64 U2 no prefetch", at.make_flash_v6(D, 256, 64, 8, 32, causal, PREFETCH=False)),
        ]
    if explore7:
        v += [("x7 paired query blocks", make_flash_v7(D, 256, 64, 8, 32, causal, UNROLL=4, PAIRS=True))]
    return v


def measure(shapes=SHAPES, causals=(False, True), only=(), explore=False, explore6=False, explore7=False,
            on_row=None):
    """{meta, results}: PyTorch unfused and SDPA, then every Numba version (or those whose names contain a
    string of `only`), for each shape and causal flag; `on_row(partial)` is called after each case.
    Each version is compiled once per causal flag and reused for every shape."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    meta = dict(device=device_name(), dtype="float32", tf32=False, torch=torch.__version__,
                timing="CUDA events, median of repeats after a warm-up call",
                flops="4*BH*N^2*d (x0.5 causal)",
                error="||O-ref||/||ref|| on 512 sampled query rows, all heads")
    rows_out = []
    numba_versions = {causal: [(name, f) for name, f in versions(causal, explore, explore6, explore7)
                               if not only or any(x in name for x in only)] for causal in causals}

    def partial():
        add_ratios(rows_out)
        return dict(meta=meta, results=rows_out)

    for BH, N, D in shapes:
        torch.manual_seed(BH + N)
        q, k, v = (torch.randn(BH, N, D, device="cuda", dtype=torch.float32) for _ in range(3))
        out = torch.empty_like(q)
        lse = torch.empty(BH, N, device="cuda", dtype=torch.float32)
        # Numba takes the PyTorch tensors directly through the CUDA array interface (no copy):
        dev_args = tuple(cuda.as_cuda_array(t) for t in (q, k, v, out, lse))
        sample = torch.randperm(N, device="cuda")[:512].sort().values
        for causal in causals:
            flops = 4.0 * BH * N * N * D * (0.5 if causal else 1.0)
            ref_o, ref_lse = reference(q, k, v, sample, causal)
            ref_norm = torch.linalg.norm(ref_o).item()
            mask = torch.ones(N, N, dtype=torch.bool, device="cuda").triu_(1) if causal else None
            qkv = (q, k, v)
            cases = [
                ("torch unfused", lambda qkv=qkv, c=causal, m=mask: unfused(*qkv, c, m), None),
                ("torch SDPA", lambda qkv=qkv, c=causal: sdpa(*qkv, c), None),
            ]
            cases += [(name, (lambda f=f, a=dev_args: f(*a)), f.kernel) for name, f in numba_versions[causal]]
            for name, fn, kernel in cases:
                is_numba = kernel is not None
                try:
                    torch.cuda.synchronize()
                    out.fill_(float("nan"))
                    lse.fill_(float("nan"))
                    t0 = time.perf_counter()
                    res = fn()  # warm-up (compiles the Numba kernels)
                    torch.cuda.synchronize()
                    first_s = time.perf_counter() - t0
                    o = out if is_numba else res
                    del res
                    fin = bool(torch.isfinite(o).all())
                    err = (
                        torch.linalg.norm(o[:, sample].double() - ref_o).item() / ref_norm
                        if fin
                        else float("nan")
                    )
                    lse_err = (lse[:, sample].double() - ref_lse).abs().max().item() if is_numba else None
                    del o
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                    base = torch.cuda.memory_allocated()
                    free0 = cuda.current_context().get_memory_info().free
                    res = fn()
                    torch.cuda.synchronize()
                    extra = torch.cuda.max_memory_allocated() - base
                    free1 = cuda.current_context().get_memory_info().free
                    del res
                    med, times = time_ms(fn, budget_s=2.0, max_reps=20)
                    r = dict(BH=BH, N=N, D=D, causal=causal, name=name, ms=med, tflops=flops / med / 1e9,
                             rel_err=err, lse_max_abs_err=lse_err, extra_bytes=extra, reps=len(times),
                             first_call_s=first_s, all_times_ms=times)
                    if is_numba:
                        r["numba_free_mem_delta"] = free0 - free1
                        r.update(kernel_resources(kernel))
                    rows_out.append(r)
                    print(
                        f"BH={BH:2d} N={N:5d} causal={causal!s:5s} {name:32s} {med:8.3f} ms "
                        f"{r['tflops']:6.2f} TFLOP/s err {err:.1e} extra {extra / 2**20:8.1f} MiB",
                        flush=True,
                    )
                except Exception as e:  # noqa: BLE001 -- keep going with the other versions
                    print(f"{name}: FAILED {type(e).__name__}: {e}", flush=True)
                    rows_out.append(
                        dict(BH=BH, N=N, D=D, causal=causal, name=name, error=f"{type(e).__name__}: {e}")
                    )
                if on_row:
                    on_row(partial())
            del mask, cases
    return partial()


def add_ratios(rows_out):
    """Each row's speed-up over unfused PyTorch and its time relative to SDPA, at the same shape."""
    for r in rows_out:
        if "ms" not in r:
            continue
        same = {
            x["name"]: x
            for x in rows_out
            if "ms" in x and (x["BH"], x["N"], x["causal"]) == (r["BH"], r["N"], r["causal"])
        }
        if "torch unfused" in same:
            r["speedup_vs_unfused"] = same["torch unfused"]["ms"] / r["ms"]
        if "torch SDPA" in same:
            r["ratio_vs_sdpa"] = r["ms"] / same["torch SDPA"]["ms"]


def table(data):
    lines = [
        f"attention float32 (TF32 off) on {data['meta']['device']}",
        f"{'shape':26s} {'version':32s} {'ms':>8s} {'TFLOP/s':>7s} {'vs unf':>6s} {'/SDPA':>6s} "
        f"{'rel err':>8s} {'extra MiB':>9s}",
    ]
    for r in data["results"]:
        shape = f"BH={r['BH']} N={r['N']} {'causal' if r['causal'] else 'full'}"
        if "ms" in r:
            lines.append(
                f"{shape:26s} {r['name']:32s} {r['ms']:8.3f} {r['tflops']:7.2f} "
                f"{r.get('speedup_vs_unfused', 0):6.2f} {r.get('ratio_vs_sdpa', 0):6.2f} "
                f"{r['rel_err']:8.1e} {r['extra_bytes'] / 2**20:9.1f}"
            )
        else:
            lines.append(f"{shape:26s} {r['name']:32s} {r['error']}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--explore", action="store_true")
    ap.add_argument("--explore6", action="store_true", help="variants of version 6")
    ap.add_argument("--explore7", action="store_true", help="variants of version 7")
    ap.add_argument("--causal-only", action="store_true", help="only the causal cases")
    ap.add_argument("--name", default="gpu_attention", help="output file name before _<device>")
    ap.add_argument("--shapes", default="", help="e.g. 3x1000x64,2x777x64 instead of the default shapes")
    ap.add_argument("--quick", action="store_true", help="only the first shape")
    ap.add_argument("--only", default="", help="comma-separated name substrings of the Numba versions to run")
    args = ap.parse_args()
    only = [x for x in args.only.split(",") if x]
    shapes = SHAPES[:1] if args.quick else SHAPES
    if args.shapes:
        shapes = [tuple(int(x) for x in shape.split("x")) for shape in args.shapes.split(",")]

    def save(partial):
        return write_json(args.out, args.name, partial)

    causals = (True,) if args.causal_only else (False, True)
    data = measure(shapes, causals, only=only, explore=args.explore, explore6=args.explore6,
                   explore7=args.explore7, on_row=save)
    path = save(data)
    txt = table(data)
    with open(path[: -len(".json")] + ".txt", "w") as f:
        f.write(txt + "\n")
    print(txt)


if __name__ == "__main__":
    main()
