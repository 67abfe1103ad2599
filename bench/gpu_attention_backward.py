"""Time the Numba FlashAttention backward (float32) against PyTorch autograd through unfused attention and
through SDPA, TF32 off, and check dQ, dK, dV against float64.

Usage:  python3 bench/gpu_attention_backward.py [--out DIR] [--quick] [--no-causal]

Shapes as bench/gpu_attention.py: (B*H=16, N=4096, d=64) and (B*H=4, N=16384, d=64).  For each: O and the
logsumexp L come from PyTorch (float32); the upstream gradient dO is random.  Each method's backward is
timed alone (CUDA events, median after a warm-up call): PyTorch's as ``torch.autograd.grad`` on a graph its
forward built (``retain_graph=True``), ours as the two kernels on preallocated dQ, dK, dV.  Memory: what the
forward keeps for the backward (allocated after the forward minus before, without the output) and the extra
peak during the backward (beyond that and the inputs).  Errors: relative Frobenius norm against float64
autograd of unfused attention, computed head by head.  Flops: 2.5 x the forward's (5 products of 2 N^2 d).
Writes gpu_attention_backward_<device>.json and .txt into --out (default bench/results).
"""

import argparse
import math
import os
import sys
import time

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
from numba import cuda  # noqa: E402

from bench.common import device_name, kernel_resources, time_ms, write_json  # noqa: E402
from bench.gpu_attention import SHAPES, sdpa, unfused  # noqa: E402
from course.kernels.attention_backward import make_flash_backward, make_flash_backward_v2  # noqa: E402

UNIT_ROUNDOFF = 2.0**-24  # float32


def versions(causal, explore=False):
    """(name, launch) of the Numba backward versions for head dimension 64."""
    v = [("numba 1 one thread per row", make_flash_backward(64, 64, 64, causal)),
         ("numba 2 4 lanes per row, 2 rows per thread", make_flash_backward_v2(64, 64, 64, causal))]
    if explore:
        v += [(f"x v2 R={r} SPLIT={split}", make_flash_backward_v2(64, 64, 64, causal, R=r, SPLIT=split))
              for r, split in ((1, 4), (2, 8), (4, 8), (1, 8))]
    return v


def tolerance(N):
    """Error bound for a float32 result whose entries are sums of about N rounded terms of random sign:
    the rounding errors add like a random walk, sqrt(N) u, times a safety factor of 4."""
    return 4.0 * math.sqrt(N) * UNIT_ROUNDOFF


def reference(q, k, v, d_o, causal):
    """float64 dQ, dK, dV of unfused attention, by autograd, one head at a time (memory)."""
    grads = [torch.empty_like(q, dtype=torch.float64) for _ in range(3)]
    N = q.shape[1]
    mask = torch.ones(N, N, dtype=torch.bool, device=q.device).triu_(1) if causal else None
    for h in range(q.shape[0]):
        qh, kh, vh = (x[h : h + 1].double().requires_grad_() for x in (q, k, v))
        out = unfused(qh, kh, vh, causal, mask)
        for g, x in zip(grads, torch.autograd.grad(out, (qh, kh, vh), d_o[h : h + 1].double()), strict=True):
            g[h : h + 1] = x
    return grads


def forward_saved(q, k, v, causal):
    """O and the natural-log logsumexp L in float32, as a FlashAttention forward would save them."""
    N, d = q.shape[1], q.shape[2]
    s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
    if causal:
        s.masked_fill_(torch.ones(N, N, dtype=torch.bool, device=q.device).triu_(1), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.matmul(torch.softmax(s, dim=-1), v)
    return o, lse


def torch_backward(q, k, v, d_o, forward):
    """(backward, bytes the forward saved for it, output): autograd's backward of forward(q, k, v) for dO."""
    qg, kg, vg = (x.clone().requires_grad_() for x in (q, k, v))
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    out = forward(qg, kg, vg)
    torch.cuda.synchronize()
    saved = torch.cuda.memory_allocated() - before - out.numel() * out.element_size()
    return (lambda: torch.autograd.grad(out, (qg, kg, vg), d_o, retain_graph=True)), saved, out


def rel_errors(grads, ref):
    return {
        name: (torch.linalg.norm(g.double() - r).item() / torch.linalg.norm(r).item())
        for name, g, r in zip(("dQ", "dK", "dV"), grads, ref, strict=True)
    }


def measure(shapes=SHAPES, causals=(False, True), explore=False, on_row=None):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    meta = dict(device=device_name(), dtype="float32", tf32=False, torch=torch.__version__,
                timing="CUDA events, median of repeats after a warm-up call; backward only",
                flops="2.5 x 4*BH*N^2*d (x0.5 causal)",
                error="||g-ref||/||ref|| against float64 autograd of unfused attention, per gradient",
                tolerance="4 sqrt(N) 2^-24 (see tolerance())")
    rows = []
    launches = {causal: versions(causal, explore) for causal in causals}
    for BH, N, D in shapes:
        torch.manual_seed(BH + N)
        q, k, v, d_o = (torch.randn(BH, N, D, device="cuda") for _ in range(4))
        for causal in causals:
            flops = 2.5 * 4.0 * BH * N * N * D * (0.5 if causal else 1.0)
            ref = reference(q, k, v, d_o, causal)
            o, lse = forward_saved(q, k, v, causal)
            mask = torch.ones(N, N, dtype=torch.bool, device="cuda").triu_(1) if causal else None
            grads = [torch.empty_like(q) for _ in range(3)]
            delta = torch.empty(BH, N, device="cuda")
            dev = [cuda.as_cuda_array(t) for t in (q, k, v, o, d_o, lse, *grads, delta)]

            cases = [
                ("torch unfused autograd", *torch_backward(q, k, v, d_o, lambda a, b, c, m=mask, cz=causal:
                                                           unfused(a, b, c, cz, m))),
                ("torch SDPA autograd", *torch_backward(q, k, v, d_o, lambda a, b, c, cz=causal:
                                                        sdpa(a, b, c, cz))),
            ]
            cases += [(name, lambda dev=dev, f=launch, g=grads: (f(*dev), g)[1], lse.numel() * 4, launch)
                      for name, launch in launches[causal]]
            for name, fn, saved, launch in cases:
                try:
                    for g in grads:
                        g.fill_(float("nan"))
                    t0 = time.perf_counter()
                    got = fn()  # warm-up (compiles the Numba kernels)
                    torch.cuda.synchronize()
                    first_s = time.perf_counter() - t0
                    errors = rel_errors(got, ref)
                    del got
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                    base = torch.cuda.memory_allocated()
                    got = fn()
                    torch.cuda.synchronize()
                    extra = torch.cuda.max_memory_allocated() - base
                    if not callable(launch):  # a PyTorch case: launch is its graph's output
                        launch = None
                    if launch is not None:
                        extra += delta.numel() * 4  # our scratch D, allocated beforehand
                    del got
                    med, times = time_ms(fn, budget_s=2.0, max_reps=20)
                    r = dict(BH=BH, N=N, D=D, causal=causal, name=name, ms=med, tflops=flops / med / 1e9,
                             rel_err=errors, tolerance=tolerance(N), saved_bytes=saved, extra_bytes=extra,
                             reps=len(times), first_call_s=first_s, all_times_ms=times)
                    if launch is not None:
                        r["kernels"] = {kname: kernel_resources(kern)
                                        for kname, kern in zip(("dq", "dkdv"), launch.kernels, strict=True)}
                    rows.append(r)
                    errs = " ".join(f"{x} {e:.1e}" for x, e in errors.items())
                    print(f"BH={BH:2d} N={N:5d} causal={causal!s:5s} {name:40s} {med:8.3f} ms "
                          f"{r['tflops']:6.2f} TFLOP/s err {errs}"
                          f" saved {saved / 2**20:8.1f} MiB extra {extra / 2**20:8.1f} MiB", flush=True)
                except Exception as e:  # noqa: BLE001 -- keep going with the other cases
                    print(f"{name}: FAILED {type(e).__name__}: {e}", flush=True)
                    rows.append(dict(BH=BH, N=N, D=D, causal=causal, name=name,
                                     error=f"{type(e).__name__}: {e}"))
                if on_row:
                    on_row(with_ratios(meta, rows))
            del cases, ref
            torch.cuda.empty_cache()
    return with_ratios(meta, rows)


def with_ratios(meta, rows):
    """Each row's time relative to the two PyTorch backwards at the same shape."""
    for r in rows:
        if "ms" not in r:
            continue
        same = {x["name"]: x for x in rows
                if "ms" in x and (x["BH"], x["N"], x["causal"]) == (r["BH"], r["N"], r["causal"])}
        for key, other in (("ratio_vs_unfused", "torch unfused autograd"),
                           ("ratio_vs_sdpa", "torch SDPA autograd")):
            if other in same:
                r[key] = r["ms"] / same[other]["ms"]
    return dict(meta=meta, results=rows)


def table(data):
    lines = [f"attention backward float32 (TF32 off) on {data['meta']['device']}",
             f"{'shape':24s} {'method':40s} {'ms':>8s} {'TFLOP/s':>7s} {'/unf':>5s} {'/SDPA':>5s} "
             f"{'err dQ':>7s} {'err dK':>7s} {'err dV':>7s} {'tol':>7s} {'saved MiB':>9s} {'extra MiB':>9s}"]
    for r in data["results"]:
        shape = f"BH={r['BH']} N={r['N']} {'causal' if r['causal'] else 'full'}"
        if "ms" not in r:
            lines.append(f"{shape:24s} {r['name']:40s} {r['error']}")
            continue
        e = r["rel_err"]
        lines.append(f"{shape:24s} {r['name']:40s} {r['ms']:8.3f} {r['tflops']:7.2f} "
                     f"{r.get('ratio_vs_unfused', 0):5.2f} {r.get('ratio_vs_sdpa', 0):5.2f} "
                     f"{e['dQ']:7.1e} {e['dK']:7.1e} {e['dV']:7.1e} {r['tolerance']:7.1e} "
                     f"{r['saved_bytes'] / 2**20:9.1f} {r['extra_bytes'] / 2**20:9.1f}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--quick", action="store_true", help="only the first shape")
    ap.add_argument("--no-causal", action="store_true")
    ap.add_argument("--explore", action="store_true", help="more variants of version 2")
    args = ap.parse_args()
    shapes = SHAPES[:1] if args.quick else SHAPES
    causals = (False,) if args.no_causal else (False, True)

    def save(partial):
        return write_json(args.out, "gpu_attention_backward", partial)

    data = measure(shapes, causals, args.explore, on_row=save)
    path = save(data)
    txt = table(data)
    with open(path[: -len(".json")] + ".txt", "w") as f:
        f.write(txt + "\n")
    print(txt)


if __name__ == "__main__":
    main()
