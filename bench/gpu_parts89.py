"""Two controls for Part 8's claims, measured on one GPU (float32, TF32 off).

* ``prefetch``: does register prefetch (matmul version 8 against version 7, 4096^3) gain little *because*
  other resident blocks already hide the loads' latency? Both versions run as usual (two blocks of 256
  threads per SM: 128 registers each) and again with one block per SM, forced by a launch that asks for
  more dynamic shared memory than half an SM holds (the kernels do not use it; it only takes the room).
  The blocks per SM each launch allows are read from the driver's occupancy calculator.
  Writes gpu_prefetch_control_<device>.json.
* ``flash``: FlashAttention forward version 5 -> version 6 (Part 7) one change at a time: version 5
  (128 query rows, four barriers per key tile), the same kernel with 256 query rows (the block size
  alone), version 6 without the K/V prefetch (shuffles for the row max and sum, P private to each warp,
  one barrier per key tile, K/V double-buffered and flat), and version 6. Full attention, (16, 4096, 64)
  and (4, 16384, 64). Writes gpu_flash_steps_<device>.json.

    python3 bench/gpu_parts89.py --out DIR [--parts prefetch,flash]
    python bench/gpu_parts89.py --dry-run        # CPU: the prefetch part's launches under Numba's simulator

Timing as the other benchmarks (bench/common.time_ms: CUDA events, median of repeats after a warm-up call
that compiles); errors against float64, outputs poisoned with NaN first.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if "--dry-run" in sys.argv:  # Numba reads its simulator switch when it is first imported
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

from course.kernels import attention as at  # noqa: E402
from course.kernels import matmul as mm  # noqa: E402

ONE_BLOCK_BYTES = 120 * 1024  # dynamic shared memory that leaves room for one block per SM (228 KiB per SM)
THREADS = 256  # the 128 x 128 register-tiled matmuls: (128 / 8) x (128 / 8) threads


def prefetch_versions():
    """(name, launch) of matmul versions 7 and 8 as the ladder builds them."""
    return [("7 regtile gen 128x128x8 8x8", mm.make_regtile_matmul(128, 128, 8, 8, 8)),
            ("8 regtile gen 128x128x8 8x8 prefetch",
             mm.make_regtile_matmul(128, 128, 8, 8, 8, prefetch=True))]


def one_block_per_sm(launch):
    """launch(A, B, C) with ONE_BLOCK_BYTES of (unused) dynamic shared memory per block."""
    kernel = launch.kernel

    def launch_alone(A, B, C):
        args = (A, B, C)
        at.set_max_dynamic_shared(kernel, args, ONE_BLOCK_BYTES)
        kernel[(C.shape[1] // 128, C.shape[0] // 128), THREADS, 0, ONE_BLOCK_BYTES](*args)

    launch_alone.kernel = kernel
    return launch_alone


def blocks_per_sm(kernel, args, dynamic_bytes):
    """Resident blocks per SM the driver allows this launch (its occupancy calculator), or a reason."""
    try:
        from numba.cuda.cudadrv.devices import get_context

        compiled = kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
        cufunc = compiled._codelibrary.get_cufunc()
        return int(get_context().get_active_blocks_per_multiprocessor(cufunc, THREADS, dynamic_bytes))
    except Exception as error:  # noqa: BLE001 -- informational only
        return f"n/a ({type(error).__name__}: {error})"[:160]


def measure_prefetch(n=4096):
    import torch

    from bench.common import device_name, kernel_resources, time_ms

    torch.manual_seed(0)
    A, B = (torch.randn(n, n, device="cuda") for _ in range(2))
    C = torch.empty(n, n, device="cuda")
    ref = A.double() @ B.double()
    args = tuple(cuda.as_cuda_array(t) for t in (A, B, C))
    rows = []
    for name, launch in prefetch_versions():
        for alone in (False, True):
            run = one_block_per_sm(launch) if alone else launch
            C.fill_(float("nan"))
            run(*args)
            torch.cuda.synchronize()
            err = (torch.linalg.norm(C.double() - ref) / torch.linalg.norm(ref)).item()
            ms, _ = time_ms(lambda run=run: run(*args))
            row = dict(name=name, one_block_per_sm=alone, ms=ms, tflops=2.0 * n**3 / ms / 1e9, rel_err=err,
                       dynamic_shared_bytes=ONE_BLOCK_BYTES if alone else 0,
                       blocks_per_sm=blocks_per_sm(launch.kernel, args, ONE_BLOCK_BYTES if alone else 0),
                       **kernel_resources(launch.kernel))
            rows.append(row)
            print(f"{name:40s} {'one block per SM' if alone else 'as launched':17s} {ms:8.3f} ms "
                  f"{row['tflops']:6.2f} TFLOP/s  blocks/SM {row['blocks_per_sm']}  err {err:.1e}",
                  flush=True)
    cublas, _ = time_ms(lambda: torch.matmul(A, B, out=C))
    meta = dict(device=device_name(), n=n, dtype="float32", tf32=False, cublas_ms=cublas,
                timing="CUDA events, median of repeats after a warm-up call",
                one_block="launched with ONE_BLOCK_BYTES of unused dynamic shared memory per block")
    return dict(meta=meta, results=rows)


FLASH_SHAPES = ((16, 4096, 64), (4, 16384, 64))


def flash_steps():
    """(name, what changes, launch) from version 5 to version 6, one change at a time (D = 64, full)."""
    D = 64
    return [
        ("5 regtile-v4 128x64 U4", "version 5: 128 query rows, 8 x 8 per thread, 4 barriers per key tile",
         at.make_flash_regtile_v4(D, 128, 64, 8, 16, False, UNROLL=4)),
        ("5 at 256 query rows", "the block size alone: 256 query rows, 256 threads, 8 x 8 per thread",
         at.make_flash_regtile_v4(D, 256, 64, 8, 32, False, UNROLL=4)),
        ("6 without K/V prefetch", "row max and sum by shuffles, P private to each warp, 1 barrier per key "
                                   "tile, K/V double-buffered and flat, Q scaled while loaded",
         at.make_flash_v6(D, 256, 64, 8, 32, False, UNROLL=4, PREFETCH=False)),
        ("6 shfl 1-barrier 256x64 U4", "version 6: the next K/V tile's loads issued before P V",
         at.make_flash_v6(D, 256, 64, 8, 32, False, UNROLL=4)),
    ]


def measure_flash():
    import torch

    from bench.common import device_name, kernel_resources, time_ms

    steps = flash_steps()
    rows = []
    for BH, N, D in FLASH_SHAPES:
        torch.manual_seed(BH + N)
        q, k, v = (torch.randn(BH, N, D, device="cuda") for _ in range(3))
        o, lse = torch.empty_like(q), torch.empty(BH, N, device="cuda")
        args = tuple(cuda.as_cuda_array(t) for t in (q, k, v, o, lse))
        sample = torch.randperm(N, device="cuda")[:256].sort().values
        s = (q[:, sample].double() @ k.double().transpose(-1, -2)) / math.sqrt(D)
        ref = torch.softmax(s, dim=-1) @ v.double()
        for name, what, launch in steps:
            o.fill_(float("nan"))
            launch(*args)
            torch.cuda.synchronize()
            err = (torch.linalg.norm(o[:, sample].double() - ref) / torch.linalg.norm(ref)).item()
            ms, _ = time_ms(lambda launch=launch, args=args: launch(*args))
            row = dict(name=name, what=what, BH=BH, N=N, D=D, causal=False, ms=ms,
                       tflops=4.0 * BH * N * N * D / ms / 1e9, rel_err=err, **kernel_resources(launch.kernel))
            rows.append(row)
            print(f"BH={BH} N={N} {name:32s} {ms:8.3f} ms {row['tflops']:6.2f} TFLOP/s regs "
                  f"{row.get('regs_per_thread')} err {err:.1e}", flush=True)
    meta = dict(device=device_name(), dtype="float32", tf32=False, flops="4*BH*N^2*d",
                timing="CUDA events, median of repeats after a warm-up call",
                error="relative Frobenius error of O on 256 sampled query rows, all heads")
    return dict(meta=meta, results=rows)


def dry_run(n=128):
    """The prefetch part's launches (as launched, and with the dynamic shared memory) under the simulator."""
    rng = np.random.default_rng(0)
    A, B = (rng.uniform(-1, 1, (n, n)).astype(np.float32) for _ in range(2))
    worst = 0.0
    for name, launch in prefetch_versions():
        for run in (launch, one_block_per_sm(launch)):
            C = np.full((n, n), np.nan, np.float32)
            run(A, B, C)
            worst = max(worst, float(np.abs(C - A.astype(np.float64) @ B).max()))
        print(f"{name}: both launches right (max error so far {worst:.1e})")
    return worst < 1e-3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--parts", default="prefetch,flash")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    if args.dry_run:
        sys.exit(0 if dry_run() else 1)
    from bench.common import write_json

    parts = {"prefetch": ("gpu_prefetch_control", measure_prefetch),
             "flash": ("gpu_flash_steps", measure_flash)}
    for part in args.parts.split(","):
        name, measure = parts[part]
        print(write_json(args.out, name, measure()), flush=True)


if __name__ == "__main__":
    main()
