"""Hopper's rungs of the bf16 GEMM ladder (course/kernels/hopper.py) against cuBLAS, in one run.

Usage:  python3 bench/gpu_matmul_hopper.py [--sizes 4096,8192] [--explore] [--out DIR]   # H100 or H200

C = A @ Bᵀ with A (n, n) and B (n, n) in bfloat16, both with K contiguous (a linear layer's weight), float32
accumulate. Timed in the same run: cuBLAS on the same layout (torch.matmul(A, Bt.t()), bf16 output), cuBLAS
on row-major B, and the best mma.sync rung (16, tensorcore.py, which takes row-major B: its copy is made
outside the timing). Each kernel's output is poisoned with NaN first and compared with float64 products of
the same bf16 inputs (relative Frobenius error). SASS counts of each kernel: HGMMA (wgmma), UTMALDG (TMA
loads), SYNCS (mbarrier operations), LDGSTS (cp.async), BAR, and STL/LDL (spills). Writes
gpu_matmul_hopper_<device>.json and .txt.
"""

import argparse
import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from bench.common import device_name, kernel_resources, time_ms, write_json  # noqa: E402
from bench.gpu_matmul import sass_counts  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
HOPPER_OPS = ("HGMMA", "HMMA", "UTMALDG", "SYNCS", "LDGSTS", "BAR", "WARPGROUP", "STL", "LDL", "CALL")


def sass_calls(kernel):
    """The SASS CALL instructions of a kernel, as written (which function a call did not inline)."""
    sass = kernel.inspect_sass()
    sass = list(sass.values())[0] if isinstance(sass, dict) else sass
    return sorted({line.split("*/")[-1].strip().rstrip(";") for line in sass.splitlines() if " CALL" in line})


def rungs(explore):
    """(name, launch(A, Bt, C), what) of the wgmma versions."""
    from course.kernels.hopper import make_wgmma_matmul

    v = [("18 wgmma, cp.async loads", make_wgmma_matmul("cp.async"),
          "2 warpgroups copy and multiply; 128x256 tiles, 4 stages, wgmma m64n256k16"),
         ("19 + TMA, mbarriers, producer warpgroup", make_wgmma_matmul("tma"),
          "1 producer warpgroup (TMA), 2 consumers; setmaxnreg 40/232"),
         ("20 + persistent blocks", make_wgmma_matmul("tma", persistent=True),
          "one block per SM walks the tiles; the next tile's loads overlap this one's stores")]
    if explore:
        v.append(("x TMA copies alone (no products)", make_wgmma_matmul("tma", compute=False),
                  "diagnostic: version 19's copies, each stage freed at once; C is not written"))
        for loads, cfg in [("cp.async", dict(STAGES=3)), ("cp.async", dict(BN=128, STAGES=5)),
                           ("tma", dict(STAGES=3)), ("tma", dict(BN=128, STAGES=6)), ("tma", dict(GROUP=8)),
                           ("tma", dict(GROUP=4, persistent=True)), ("tma", dict(GROUP=8, persistent=True))]:
            v.append((f"x {loads} " + ",".join(f"{k}={x}" for k, x in cfg.items()),
                      make_wgmma_matmul(loads, **cfg), "exploration"))
    return v


def measure(n, explore, only=""):
    flops = 2.0 * n**3
    torch.manual_seed(0)
    A = torch.randn(n, n, device="cuda").to(torch.bfloat16)
    Bt = torch.randn(n, n, device="cuda").to(torch.bfloat16)
    B = Bt.t().contiguous()
    C = torch.empty(n, n, device="cuda", dtype=torch.float32)
    C16 = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    ref = A.double() @ Bt.double().t()
    ref_norm = torch.linalg.norm(ref).item()
    rows = []

    def record(name, fn, out, kernel, what, copied=None):
        out.fill_(float("nan"))
        start = time.perf_counter()
        try:
            fn()
            torch.cuda.synchronize()
        except Exception as error:  # noqa: BLE001 -- a failing version must not stop the others
            rows.append(dict(name=name, what=what, error=f"{type(error).__name__}: {error}"[:600]))
            print(f"{name}: FAILED {rows[-1]['error']}", flush=True)
            return
        first = time.perf_counter() - start
        finite = bool(torch.isfinite(out).all())
        err = torch.linalg.norm(out.double() - ref).item() / ref_norm if finite else float("nan")
        med, times = time_ms(fn)
        row = dict(name=name, what=what, ms=med, tflops=flops / med / 1e9, rel_err=err, reps=len(times),
                   first_call_s=first)
        if what.startswith("diagnostic"):
            row["copied_tb_per_s"] = copied(n) / med / 1e9
            print(f"  {name}: {row['copied_tb_per_s']:.2f} TB/s from L2/HBM into shared memory", flush=True)
        if kernel is not None:
            row.update(kernel_resources(kernel))
            row["sass"] = sass_counts(kernel, HOPPER_OPS)
            row["calls"] = sass_calls(kernel)
        rows.append(row)
        print(f"n={n} {name:45s} {med:8.3f} ms {row['tflops']:7.1f} TFLOP/s err {err:.1e} "
              f"regs {row.get('regs_per_thread', '-')} {row.get('sass', '')}", flush=True)

    record("cuBLAS bf16, A @ Bt.t() (same layout)", lambda: torch.matmul(A, Bt.t(), out=C16), C16, None,
           "bf16 output")
    record("cuBLAS bf16, A @ B (row-major B)", lambda: torch.matmul(A, B, out=C16), C16, None, "bf16 output")
    from course.kernels import tensorcore as tc

    v16 = tc.make_mma_matmul(WM=64, WN=64, STAGES=4)
    record("16 mma.sync, warp tiles 64x64, 4 stages", lambda: v16(A, B, C), C, v16.kernel,
           "best mma.sync rung; row-major B")
    for name, launch, what in rungs(explore):
        if only and only not in name:
            continue
        record(name, lambda launch=launch: launch(A, Bt, C), C, launch.kernel, what,
               lambda n, launch=launch: launch.copied_bytes(n, n, n))
    record("cuBLAS bf16, A @ Bt.t() (again)", lambda: torch.matmul(A, Bt.t(), out=C16), C16, None,
           "bf16 output")
    cublas = min(r["ms"] for r in rows if r["name"].startswith("cuBLAS bf16, A @ Bt") and "ms" in r)
    for r in rows:
        if "ms" in r:
            r["frac_cublas"] = cublas / r["ms"]
    return rows


def table(data):
    lines = [f"{data['device']}: bf16 GEMM C = A Bᵀ (float32 accumulate), as a fraction of cuBLAS on "
             "the same layout"]
    for n, rows in data["sizes"].items():
        lines.append(f"\nn = {n}")
        for r in rows:
            if "ms" in r:
                sass = r.get("sass", {})
                counts = " ".join(f"{op}={sass[op]}" for op in HOPPER_OPS
                                  if isinstance(sass, dict) and sass.get(op))
                lines.append(f"  {r['name']:45s} {r['ms']:8.3f} ms {r['tflops']:7.1f} TFLOP/s "
                             f"{r['frac_cublas']:5.2f} of cuBLAS  err {r['rel_err']:.1e}  {counts}")
            else:
                lines.append(f"  {r['name']:45s} FAILED: {r['error'][:200]}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="4096,8192")
    parser.add_argument("--explore", action="store_true")
    parser.add_argument("--out", default=RESULTS)
    parser.add_argument("--name", default="gpu_matmul_hopper")
    parser.add_argument("--only", default="", help="only the rungs whose name holds this text")
    args = parser.parse_args()
    data = dict(device=device_name(), torch=torch.__version__, sizes={},
                timing="CUDA events, median of repeats after a warm-up call")
    for n in (int(x) for x in args.sizes.split(",")):
        data["sizes"][str(n)] = measure(n, args.explore, args.only)
        path = write_json(args.out, args.name, data)
    with open(path.replace(".json", ".txt"), "w") as f:
        f.write(table(data))
    print(table(data))


if __name__ == "__main__":
    main()
