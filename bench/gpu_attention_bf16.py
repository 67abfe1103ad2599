"""Time the tensor-core FlashAttention forward (course/kernels/tensorcore_attention.py) against SDPA on bf16.

Usage:  python3 bench/gpu_attention_bf16.py [--out DIR] [--explore | --explore-hopper] [--name STEM]

On a GPU of compute capability 9.0 the wgmma forward (course/kernels/hopper_attention.py) is timed too;
--explore-hopper times only its variants beside version 1.

Shapes and flops as bench/gpu_attention.py (4*BH*N^2*d, half when causal); Q, K, V in bfloat16.  SDPA gets
(1, BH, N, d) bf16 tensors and returns bf16; ours writes O in float32.  Error: relative Frobenius error of O
on 512 sampled query rows against float64 attention of the same bf16 inputs.  "x peak": TFLOP/s over the
H100/H200 SXM data-sheet dense bf16 tensor-core rate, 989.4 TFLOP/s.
Writes gpu_attention_bf16_<device>.json and .txt into --out (default bench/results).
"""

import argparse
import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from bench.common import device_name, kernel_resources, time_ms, write_json  # noqa: E402
from bench.gpu_attention import SHAPES, reference, sdpa  # noqa: E402
from course.kernels.tensorcore_attention import make_flash_tc  # noqa: E402

PEAK_BF16_DENSE = 989.4  # TFLOP/s, NVIDIA's data sheet for H100 SXM and H200 SXM


def hopper_versions(causal, explore):
    """The wgmma forward (course/kernels/hopper_attention.py), on a GPU of compute capability 9.0 only."""
    if torch.cuda.get_device_capability() != (9, 0):
        return []
    from course.kernels.hopper_attention import make_flash_wgmma

    v = [("tc 2 wgmma, TMA, pipelined, ping-pong", make_flash_wgmma(128, 4, causal))]
    if explore:
        v += [("x wgmma, 3 stages", make_flash_wgmma(128, 3, causal)),
              ("x wgmma, not pipelined", make_flash_wgmma(128, 4, causal, PIPELINED=False))]
    return v


def versions(causal, explore):
    v = [("tc 1 mma.sync 64 rows x 64 keys, 4 warps", make_flash_tc(64, 64, 64, causal))]
    v += hopper_versions(causal, explore == "hopper")
    if explore == "hopper":
        return v
    if explore:
        v += [("x tc 128 rows x 64 keys, 8 warps", make_flash_tc(64, 128, 64, causal)),
              ("x tc 64 rows x 128 keys", make_flash_tc(64, 64, 128, causal)),
              ("x tc 64 x 64, max_registers=128", make_flash_tc(64, 64, 64, causal, max_registers=128)),
              ("x tc 64 x 128, max_registers=168", make_flash_tc(64, 64, 128, causal, max_registers=168)),
              ("x tc 64 x 128, max_registers=128", make_flash_tc(64, 64, 128, causal, max_registers=128))]
    return v


def measure(shapes=SHAPES, causals=(False, True), explore=False, on_row=None):
    meta = dict(device=device_name(), dtype="bfloat16 Q, K, V; fp32 softmax and accumulation",
                flops="4*BH*N^2*d (x0.5 causal)", peak_bf16_dense_tflops=PEAK_BF16_DENSE,
                timing="CUDA events, median of repeats after a warm-up call")
    rows = []
    kernels = {causal: versions(causal, explore) for causal in causals}
    warm_up()
    for BH, N, D in shapes:
        torch.manual_seed(BH + N)
        q, k, v = (torch.randn(BH, N, D, device="cuda").to(torch.bfloat16) for _ in range(3))
        out = torch.empty(BH, N, D, device="cuda")
        lse = torch.empty(BH, N, device="cuda")
        sample = torch.randperm(N, device="cuda")[:512].sort().values
        for causal in causals:
            flops = 4.0 * BH * N * N * D * (0.5 if causal else 1.0)
            ref, ref_lse = reference(q.float(), k.float(), v.float(), sample, causal)
            qkv = (q, k, v)
            cases = [("torch SDPA bf16", lambda a=qkv, c=causal: sdpa(*a, c), None)]
            cases += [(name, (lambda f=f, a=(*qkv, out, lse): f(*a)), f) for name, f in kernels[causal]]
            cases += [("torch SDPA bf16 (again)", cases[0][1], None)]
            for name, fn, launch in cases:
                try:
                    out.fill_(float("nan"))
                    res = fn()
                    torch.cuda.synchronize()
                    o = out if launch else res
                    diff = o[:, sample].double() - ref
                    err = torch.linalg.norm(diff).item() / torch.linalg.norm(ref).item()
                    lse_err = (lse[:, sample].double() - ref_lse).abs().max().item() if launch else None
                    med, times = time_ms(fn, budget_s=1.0, max_reps=30)
                    r = dict(BH=BH, N=N, D=D, causal=causal, name=name, ms=med, tflops=flops / med / 1e9,
                             frac_peak=flops / med / 1e9 / PEAK_BF16_DENSE, rel_err=err,
                             lse_max_abs_err=lse_err, reps=len(times))
                    if launch:
                        r.update(kernel_resources(launch.kernel))
                    rows.append(r)
                    print(f"BH={BH:2d} N={N:5d} causal={causal!s:5s} {name:42s} {med:8.3f} ms "
                          f"{r['tflops']:7.1f} TFLOP/s err {err:.1e} regs {r.get('regs_per_thread', '-')}",
                          flush=True)
                except Exception as e:  # noqa: BLE001 -- keep going
                    print(f"{name}: FAILED {type(e).__name__}: {e}", flush=True)
                    rows.append(dict(BH=BH, N=N, D=D, causal=causal, name=name,
                                     error=f"{type(e).__name__}: {e}"))
                if on_row:
                    on_row(with_ratios(meta, rows))
    return with_ratios(meta, rows)


def warm_up(seconds=1.0):
    """Keep the GPU busy for a second first, so that the first case is not timed while the clocks ramp up
    (SDPA, measured first, was up to 18 % slower than the same SDPA measured later without this)."""
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        a @ a
        torch.cuda.synchronize()


def with_ratios(meta, rows):
    """Speed relative to SDPA bf16 at the same shape (SDPA's faster time of its two series / our time:
    > 1 is faster)."""
    for r in rows:
        same = [x["ms"] for x in rows if "ms" in x and x["name"].startswith("torch SDPA bf16")
                and (x["BH"], x["N"], x["causal"]) == (r["BH"], r["N"], r["causal"])]
        if "ms" in r and same:
            r["speed_vs_sdpa"] = min(same) / r["ms"]
    return dict(meta=meta, results=rows)


def table(data):
    lines = [f"attention forward, bf16 in, on {data['meta']['device']} (speed = SDPA time / time)",
             f"{'shape':22s} {'version':42s} {'ms':>8s} {'TFLOP/s':>8s} {'x peak':>6s} {'speed':>6s} "
             f"{'rel err':>8s}"]
    for r in data["results"]:
        shape = f"BH={r['BH']} N={r['N']} {'causal' if r['causal'] else 'full'}"
        if "ms" in r:
            lines.append(f"{shape:22s} {r['name']:42s} {r['ms']:8.3f} {r['tflops']:8.1f} "
                         f"{r['frac_peak']:6.2f} {r.get('speed_vs_sdpa', 0):6.2f} {r['rel_err']:8.1e}")
        else:
            lines.append(f"{shape:22s} {r['name']:42s} {r['error']}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--explore", action="store_true")
    ap.add_argument("--explore-hopper", action="store_true", help="only the wgmma variants explored")
    ap.add_argument("--name", default="gpu_attention_bf16")
    args = ap.parse_args()

    def save(partial):
        return write_json(args.out, args.name, partial)

    data = measure(explore="hopper" if args.explore_hopper else args.explore, on_row=save)
    path = save(data)
    with open(path[: -len(".json")] + ".txt", "w") as f:
        f.write(table(data) + "\n")
    print(table(data))


if __name__ == "__main__":
    main()
