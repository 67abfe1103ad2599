"""Time every course matmul kernel against torch.matmul (cuBLAS) at 4096^3 float32, TF32 off.

Usage:  python3 bench/gpu_matmul.py [--n 4096] [--out DIR] [--explore] [--only 4,10,11] [--name STEM]
        python3 bench/gpu_matmul.py --dry-run --n 128 --only 11,12   # the chosen versions, on the CPU
        python3 bench/gpu_matmul.py --bf16 [--explore] [--only 13,14]  # the tensor-core rungs

--bf16: the tensor-core versions (13 and up, course/kernels/tensorcore.py), bfloat16 A and B, float32
accumulate and output, against torch.matmul on bfloat16 (cuBLAS, bf16 output); writes
gpu_matmul_bf16_<device>.json and .txt, with the SASS instruction counts of each kernel.

For each version: correctness against a float64 reference computed on the GPU (relative Frobenius error,
output poisoned with NaN first), median time over repeats timed with CUDA events after a warm-up call
(the warm-up compiles), TFLOP/s, fraction of cuBLAS, and the compiler's registers / local memory per
thread.  Writes gpu_matmul_<device>.json and .txt into --out (default bench/results).
"""

import argparse
import os
import sys
import time

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if "--dry-run" in sys.argv:  # Numba reads its simulator switch when it is first imported
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from bench.common import device_name, kernel_resources, time_ms, write_json  # noqa: E402
from course.kernels import matmul as mm  # noqa: E402


def versions(explore):
    """(name, launch(A, B, C), jitted kernel, what it is) in teaching order."""
    t32 = mm.make_tiled_matmul(32)
    t16 = mm.make_tiled_matmul(16)
    co = mm.make_coarsened_matmul(16, 4)
    loc = mm.make_regtile_matmul_local(128, 128, 8, 8, 8)
    g4 = mm.make_regtile_matmul(64, 64, 8, 4, 4)
    g8 = mm.make_regtile_matmul(128, 128, 8, 8, 8)
    g8p = mm.make_regtile_matmul(128, 128, 8, 8, 8, prefetch=True)
    g8k16 = mm.make_regtile_matmul(128, 128, 16, 8, 8)
    v9 = mm.make_regtile_matmul_vec(128, 128, 8, 8, 8, prefetch=True)
    v10 = mm.make_regtile_matmul_vec(128, 128, 8, 8, 8, prefetch=True, UNROLL=2, max_registers=128)
    db16 = mm.make_double_buffered_matmul(16)
    db32 = mm.make_double_buffered_matmul(32)
    v12 = mm.make_regtile_matmul_vec(128, 128, 8, 8, 8, prefetch=True, UNROLL=2, max_registers=128,
                                     double_buffer=True)
    v17 = mm.make_warptile_matmul(BM=256, BN=128, BK=8, WM=64, WN=64, TM=16, TN=8, max_registers=None,
                                  pipelined=True)
    v = [
        ("1 naive", mm.launch_naive, mm.matmul_naive, "one thread per output"),
        ("2 tiled16 static", mm.launch_tiled16, mm.matmul_tiled16, "16x16 static shared tiles"),
        (
            "3 tiled16 dynamic",
            mm.launch_tiled_dynamic,
            mm.matmul_tiled_dynamic,
            "dynamic smem, run-time t=16",
        ),
        ("4 factory TILE=16", t16, t16.kernel, "make_tiled_matmul(16)"),
        ("4 factory TILE=32", t32, t32.kernel, "make_tiled_matmul(32)"),
        ("5 coarsened 16x4", co, co.kernel, "make_coarsened_matmul(16, 4)"),
        ("6 regtile local 128x128x8 8x8", loc, loc.kernel, "local-array accumulators"),
        ("7 regtile gen 64x64x8 4x4", g4, g4.kernel, "generated scalars, 4x4 per thread"),
        ("7 regtile gen 128x128x8 8x8", g8, g8.kernel, "generated scalars, 8x8 per thread"),
        ("7 regtile gen 128x128x16 8x8", g8k16, g8k16.kernel, "BK=16: half the barriers"),
        ("8 regtile gen 128x128x8 8x8 prefetch", g8p, g8p.kernel, "+ register double buffering"),
        ("9 regtile vec4 128x128x8 8x8 prefetch", v9, v9.kernel, "16-byte shared loads (+ prefetch)"),
        ("10 vec4 + unroll2 + max_registers=128", v10, v10.kernel, "loads of step k+1 before FMAs of k"),
        ("11 double-buffered TILE=16", db16, db16.kernel, "version 4, 2 shared buffers, 1 barrier per tile"),
        ("11 double-buffered TILE=32", db32, db32.kernel, "version 4, 2 shared buffers, 1 barrier per tile"),
        ("12 version 10 double-buffered", v12, v12.kernel, "v10, 2 shared buffers, 1 barrier per step"),
        ("17 warp tiles, 256x128x8, 16x8/thread", v17, v17.kernel, "warps of 64x64, 1 block per SM"),
    ]
    if explore:
        for cfg in [
            dict(BM=128, BN=128, BK=8, TM=8, TN=8, UNROLL=2),
            dict(BM=128, BN=128, BK=8, TM=8, TN=8, UNROLL=2, max_registers=128),
            dict(BM=128, BN=128, BK=16, TM=8, TN=8, UNROLL=2, max_registers=128),
            dict(BM=128, BN=128, BK=16, TM=8, TN=8, UNROLL=2),
            dict(BM=128, BN=128, BK=8, TM=8, TN=8, prefetch=False),
            dict(BM=128, BN=128, BK=8, TM=8, TN=8, prefetch=False, max_registers=128),
            dict(BM=128, BN=128, BK=16, TM=8, TN=8, prefetch=True),
            dict(BM=128, BN=128, BK=16, TM=8, TN=8, prefetch=True, max_registers=128),
            dict(BM=128, BN=64, BK=8, TM=8, TN=4, prefetch=True),
            dict(BM=64, BN=128, BK=8, TM=4, TN=8, prefetch=True),
            dict(BM=128, BN=128, BK=32, TM=8, TN=8, prefetch=True),
        ]:
            f = mm.make_regtile_matmul_vec(**cfg)
            v.append(("x9 vec " + ",".join(f"{k}={x}" for k, x in cfg.items()), f, f.kernel, "exploration"))
        for cfg in [
            dict(), dict(double_buffer=False), dict(UNROLL=1), dict(WM=32, WN=64), dict(BK=16),
            dict(BM=256, WM=64, WN=64, TM=16, max_registers=None),
            dict(BM=256, WM=64, WN=64, TM=16, BK=16, max_registers=None),
            dict(BN=256, WM=64, WN=64, TN=16, max_registers=None),
            dict(pipelined=True), dict(BK=16, pipelined=True),
            dict(BM=256, WM=64, WN=64, TM=16, max_registers=None, pipelined=True),
            dict(BM=256, WM=64, WN=64, TM=16, BK=16, max_registers=None, pipelined=True),
        ]:
            f = mm.make_warptile_matmul(**cfg)
            v.append(("x17 warp " + ",".join(f"{k}={x}" for k, x in cfg.items()), f, f.kernel, "exploration"))
        for cfg in [
            dict(BM=128, BN=64, BK=8, TM=8, TN=4),
            dict(BM=128, BN=128, BK=16, TM=8, TN=8, prefetch=True),
            dict(BM=128, BN=128, BK=8, TM=8, TN=8, prefetch=True, max_registers=128),
            dict(BM=64, BN=128, BK=8, TM=8, TN=8),
            dict(BM=128, BN=128, BK=8, TM=8, TN=8, max_registers=168),
        ]:
            f = mm.make_regtile_matmul(**cfg)
            v.append(("x " + ",".join(f"{k}={x}" for k, x in cfg.items()), f, f.kernel, "exploration"))
    return v


def versions_bf16(explore):
    """(name, launch(A, B, C), jitted kernel, what it is) of the tensor-core rungs."""
    from course.kernels import tensorcore as tc

    v = [
        ("13 mma.sync, Numba loads", tc.make_mma_matmul_simple(), "probe design: fragments by 32-bit loads"),
        ("14 + cp.async, ldmatrix", tc.make_mma_matmul(STAGES=1), "1 buffer: copy, wait, compute"),
        ("15 + 3-stage pipeline", tc.make_mma_matmul(STAGES=3), "1 barrier per K step"),
        ("16 warp tiles 64x64, 4 stages", tc.make_mma_matmul(WM=64, WN=64, STAGES=4),
         "4 warps: half the ldmatrix bytes per mma"),
    ]
    if explore:
        for cfg in [
            dict(STAGES=3, LOADS=False), dict(WM=64, WN=64, STAGES=4, LOADS=False),
            dict(STAGES=2), dict(STAGES=4), dict(STAGES=3, max_registers=128), dict(STAGES=3, PREFETCH=True),
            dict(STAGES=3, GROUP=8), dict(BK=64, STAGES=3, PREFETCH=True),
            dict(WM=64, WN=64, STAGES=4, PREFETCH=True), dict(WM=64, WN=64, STAGES=3),
            dict(BM=256, BN=128, WM=64, WN=64, STAGES=3), dict(BM=128, BN=256, WM=32, WN=64, STAGES=3),
        ]:
            what = "diagnostic: K loop on the first tiles (wrong C)" if "LOADS" in cfg else "exploration"
            v.append(("x " + ",".join(f"{k}={x}" for k, x in cfg.items()), tc.make_mma_matmul(**cfg), what))
    return [(name, f, f.kernel, what) for name, f, what in v]


MMA_SYNC_OPS = ("HMMA", "LDSM", "LDGSTS", "LDS", "STS", "LDG", "BAR", "CALL", "STL", "LDL")


def sass_counts(kernel, ops=MMA_SYNC_OPS):
    """How many of the instructions that matter here the kernel's SASS holds (tensor-core HMMA, LDSM,
    the asynchronous copies LDGSTS, CALL: a call that LTO did not inline), or why none."""
    try:
        sass = kernel.inspect_sass()
        sass = list(sass.values())[0] if isinstance(sass, dict) else sass
    except Exception as error:  # noqa: BLE001 -- informational only
        return f"n/a ({type(error).__name__}: {error})"
    words = [line.split() for line in sass.splitlines()]
    names = [w.split(".")[0] for ws in words for w in ws if w.split(".")[0] in ops]
    counts = {op: names.count(op) for op in ops}
    forms = [w for ws in words for w in ws if w.split(".")[0] in ("HMMA", "HGMMA") and "." in w]
    counts["mma_forms"] = sorted(set(forms))
    return counts


def measure_bf16(n=4096, explore=False, only=(), on_row=None):
    """{meta, results}: the tensor-core versions between two cuBLAS bf16 runs (like `measure`)."""
    flops = 2.0 * n**3
    torch.manual_seed(0)
    A = torch.randn(n, n, device="cuda").to(torch.bfloat16)
    B = torch.randn(n, n, device="cuda").to(torch.bfloat16)
    C = torch.empty(n, n, device="cuda", dtype=torch.float32)
    ref = A.double() @ B.double()
    ref_norm = torch.linalg.norm(ref).item()
    meta = dict(device=device_name(), n=n, dtype="bfloat16 in, float32 accumulate", torch=torch.__version__,
                timing="CUDA events, median of repeats after a warm-up call", flops=flops,
                error="relative Frobenius error against float64 products of the same bf16 inputs; cuBLAS "
                      "rounds its output to bf16, the Numba kernels write float32")
    rows = []

    def partial():
        cublas = min((r["ms"] for r in rows if r["name"].startswith("cuBLAS")), default=None)
        for r in rows:
            if "ms" in r and cublas:
                r["frac_cublas"] = cublas / r["ms"]
        return dict(meta=meta, results=rows)

    def record(name, fn, out, kernel, what):
        out.fill_(float("nan"))
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        warm_s = time.perf_counter() - t0
        finite = bool(torch.isfinite(out).all())
        err = torch.linalg.norm(out.double() - ref).item() / ref_norm if finite else float("nan")
        med, times = time_ms(fn)
        med2, _ = time_ms(fn, budget_s=0.5, max_reps=10)
        r = dict(name=name, what=what, ms=med, ms_repeat=med2, tflops=flops / med / 1e9, rel_err=err,
                 reps=len(times), first_call_s=warm_s)
        if kernel is not None:
            r.update(kernel_resources(kernel))
            r["sass"] = sass_counts(kernel)
        rows.append(r)
        print(f"{name:45s} {med:9.3f} ms  {r['tflops']:7.2f} TFLOP/s  err {err:.1e}  "
              f"regs {r.get('regs_per_thread', '-')}  local {r.get('local_bytes_per_thread', '-')}  "
              f"{r.get('sass', '')}", flush=True)
        if on_row:
            on_row(partial())

    from course.kernels.tensorcore import make_mma_peak

    peak = make_mma_peak()
    out = torch.empty(peak.threads, device="cuda")
    peak(out)
    ms, _ = time_ms(lambda: peak(out))
    meta["mma_sync_peak_tflops"] = peak.flops / ms / 1e9
    print(f"mma.sync alone (registers only, 8 chains per warp): {meta['mma_sync_peak_tflops']:.1f} TFLOP/s "
          f"{sass_counts(peak.kernel)}", flush=True)
    C16 = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    record("cuBLAS torch.matmul bf16", lambda: torch.matmul(A, B, out=C16), C16, None, "bf16 output")
    for name, launch, kernel, what in versions_bf16(explore):
        if not chosen(name, only):
            continue
        try:
            record(name, lambda launch=launch: launch(A, B, C), C, kernel, what)
        except Exception as e:  # noqa: BLE001 -- a failing version must not stop the others
            print(f"{name}: FAILED {type(e).__name__}: {e}", flush=True)
            rows.append(dict(name=name, what=what, error=f"{type(e).__name__}: {e}"))
    record("cuBLAS torch.matmul bf16 (again)", lambda: torch.matmul(A, B, out=C16), C16, None, "bf16 output")
    return partial()


def chosen(name, only):
    """Is version `name` one of `only`: a version number (its leading number) or a substring of its name?"""
    number = name.split()[0]
    return not only or any(x == number if x.isdigit() else x in name for x in only)


def dry_run(n, explore, only):
    """Run the chosen versions once at n x n x n under Numba's simulator and compare with NumPy."""
    if not cuda.is_available() or os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        raise SystemExit("--dry-run runs under Numba's simulator: NUMBA_ENABLE_CUDASIM=1 must be set.")
    rng = np.random.default_rng(0)
    A, B = (rng.uniform(-1, 1, (n, n)).astype(np.float32) for _ in range(2))
    expected = A.astype(np.float64) @ B
    failed = 0
    for name, launch, _kernel, _what in versions(explore):
        if not chosen(name, only):
            continue
        C = np.full((n, n), np.nan, np.float32)
        start = time.perf_counter()
        launch(A, B, C)
        error = float(np.abs(C - expected).max())
        failed += not error < 1e-3
        print(f"{name:45s} max error {error:.1e}  ({time.perf_counter() - start:.1f} s on Numba's simulator)")
    return failed


def measure(n=4096, explore=False, only=(), on_row=None):
    """{meta, results}: every version (or those `only` chooses, see `chosen`) between two cuBLAS runs;
    `on_row(partial)` is called after each version with what is measured so far."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    flops = 2.0 * n**3
    torch.manual_seed(0)
    A = torch.randn(n, n, device="cuda", dtype=torch.float32)
    B = torch.randn(n, n, device="cuda", dtype=torch.float32)
    C = torch.empty(n, n, device="cuda", dtype=torch.float32)
    ref = A.double() @ B.double()
    ref_norm = torch.linalg.norm(ref).item()
    # Numba reads the tensors through __cuda_array_interface__; wrap once to skip that per launch.
    dA, dB, dC = cuda.as_cuda_array(A), cuda.as_cuda_array(B), cuda.as_cuda_array(C)
    meta = dict(device=device_name(), n=n, dtype="float32", tf32=False, torch=torch.__version__,
                timing="CUDA events, median of repeats after a warm-up call", flops=flops)
    rows = []

    def rel_err():
        if not torch.isfinite(C).all():
            return float("nan")
        return (torch.linalg.norm(C.double() - ref).item()) / ref_norm

    def partial():
        cublas = min((r["ms"] for r in rows if r["name"].startswith("cuBLAS")), default=None)
        for r in rows:
            if "ms" in r and cublas:
                r["frac_cublas"] = cublas / r["ms"]
        return dict(meta=meta, results=rows)

    def record(name, fn, kernel, what):
        C.fill_(float("nan"))
        t0 = time.perf_counter()
        fn()  # warm-up: compiles on the first call
        torch.cuda.synchronize()
        warm_s = time.perf_counter() - t0
        err = rel_err()
        med, times = time_ms(fn)
        med2, _ = time_ms(fn, budget_s=0.5, max_reps=10)  # second series: the spread between the two is noise
        r = dict(name=name, what=what, ms=med, ms_repeat=med2, tflops=flops / med / 1e9, rel_err=err,
                 reps=len(times), first_call_s=warm_s)
        if kernel is not None:
            r.update(kernel_resources(kernel))
        rows.append(r)
        print(f"{name:45s} {med:9.3f} ms  {r['tflops']:6.2f} TFLOP/s  err {err:.1e}  "
              f"regs {r.get('regs_per_thread', '-')}  local {r.get('local_bytes_per_thread', '-')}",
              flush=True)
        if on_row:
            on_row(partial())

    record("cuBLAS torch.matmul", lambda: torch.matmul(A, B, out=C), None, "TF32 off")
    for name, launch, kernel, what in versions(explore):
        if not chosen(name, only):
            continue
        try:
            record(name, lambda launch=launch: launch(dA, dB, dC), kernel, what)
        except Exception as e:  # noqa: BLE001 -- a failing version must not stop the others
            print(f"{name}: FAILED {type(e).__name__}: {e}", flush=True)
            rows.append(dict(name=name, what=what, error=f"{type(e).__name__}: {e}"))
    record("cuBLAS torch.matmul (again)", lambda: torch.matmul(A, B, out=C), None, "TF32 off")
    return partial()


def table(data):
    meta, rows = data["meta"], data["results"]
    lines = [
        f"matmul {meta['n']}^3 {meta['dtype']}{', TF32 off' if 'tf32' in meta else ''}, on {meta['device']}",
        f"{'version':45s} {'ms':>9s} {'TFLOP/s':>8s} "
        f"{'x cuBLAS':>8s} {'rel err':>8s} {'regs':>5s} {'local':>5s}",
    ]
    for r in rows:
        if "ms" in r:
            lines.append(
                f"{r['name']:45s} {r['ms']:9.3f} {r['tflops']:8.2f} {r['frac_cublas']:8.2f} "
                f"{r['rel_err']:8.1e} {str(r.get('regs_per_thread', '')):>5s} "
                f"{str(r.get('local_bytes_per_thread', '')):>5s}"
            )
        else:
            lines.append(f"{r['name']:45s} {r['error']}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--explore", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated version numbers or name substrings to run")
    ap.add_argument("--name", default="gpu_matmul", help="stem of the result files: STEM_<device>.json/.txt")
    ap.add_argument("--dry-run", action="store_true", help="run the chosen versions under Numba's simulator")
    ap.add_argument("--bf16", action="store_true", help="the tensor-core versions, bfloat16 in")
    args = ap.parse_args()
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    if args.dry_run:
        sys.exit(dry_run(args.n, args.explore, only))

    def save(partial):
        return write_json(args.out, args.name, partial)

    if args.bf16:
        name = args.name if args.name != "gpu_matmul" else "gpu_matmul_bf16"
        data = measure_bf16(args.n, args.explore, only, on_row=lambda p: write_json(args.out, name, p))
        path = write_json(args.out, name, data)
    else:
        data = measure(args.n, args.explore, only, on_row=save)
        path = save(data)
    txt = table(data)
    with open(path[: -len(".json")] + ".txt", "w") as f:
        f.write(txt + "\n")
    print(txt)


if __name__ == "__main__":
    main()
