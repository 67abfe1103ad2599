"""Lesson 05, static against dynamic shared memory, taken apart: the 16 x 16 tiled matmul with the tile
width known to the compiler or not, and its tiles in fixed-size shared arrays or carved from one dynamic
buffer, changed one at a time.

    static, compile-time width      version 2 of the ladder (course/kernels/matmul.py, matmul_tiled16)
    static, run-time loop bound     the same arrays, but the inner loop runs to a width passed at launch
    dynamic, run-time width         version 3 (matmul_tiled_dynamic): buffer carved with a run-time t
    dynamic, compile-time width     the carved buffer, with the width a constant (a factory's closure)
    dynamic, run-time width, uint64 version 3 with unsigned indices: no negative-index wrap-around code

Each is timed at 4096^3 (TFLOP/s), and its PTX counted: instructions per float32 FMA in the inner loop.
"""

import numpy as np
from numba import cuda, float32, uint64

from course.kernels.matmul import TILE, matmul_tiled16, matmul_tiled_dynamic


@cuda.jit
def matmul_static_runtime_loop(A, B, C, t):
    """Version 2's fixed TILE x TILE shared arrays, but the inner loop's trip count `t` (= TILE) comes in at
    launch: the compiler knows every array's shape, not how often the loop runs."""
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for k0 in range(0, A.shape[1], TILE):
        sA[ty, tx] = A[row, k0 + tx]
        sB[ty, tx] = B[k0 + ty, col]
        cuda.syncthreads()
        for k in range(t):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[row, col] = acc


def make_dynamic_compile_time(T):
    """Version 3's one dynamic buffer carved into two tiles, with the width T a constant: the carving is
    the same arithmetic, but on numbers the compiler knows."""

    @cuda.jit
    def matmul_dynamic_compile_time(A, B, C):
        smem = cuda.shared.array(0, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        acc = float32(0.0)
        for k0 in range(0, A.shape[1], T):
            smem[ty * T + tx] = A[row, k0 + tx]
            smem[T * T + ty * T + tx] = B[k0 + ty, col]
            cuda.syncthreads()
            for k in range(T):
                acc += smem[ty * T + k] * smem[T * T + k * T + tx]
            cuda.syncthreads()
        C[row, col] = acc

    return matmul_dynamic_compile_time


matmul_dynamic_compile_time = make_dynamic_compile_time(TILE)


@cuda.jit
def matmul_dynamic_unsigned(A, B, C, t):
    """Version 3 with every shared-memory index an unsigned 64-bit number (u, ux, uy), so that Numba emits
    no negative-index wrap-around for them; the global indices are version 3's."""
    smem = cuda.shared.array(0, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    u, ux, uy = uint64(t), uint64(tx), uint64(ty)
    row = cuda.blockIdx.y * t + ty
    col = cuda.blockIdx.x * t + tx
    off_b = u * u
    acc = float32(0.0)
    for k0 in range(0, A.shape[1], t):
        smem[uy * u + ux] = A[row, k0 + tx]
        smem[off_b + uy * u + ux] = B[k0 + ty, col]
        cuda.syncthreads()
        for k in range(u):
            acc += smem[uy * u + k] * smem[off_b + k * u + ux]
        cuda.syncthreads()
    C[row, col] = acc


SHARED_BYTES = 2 * TILE * TILE * 4
VARIANTS = {  # name -> (kernel, extra arguments, dynamic shared bytes)
    "static, compile-time width": (matmul_tiled16, (), 0),
    "static, run-time loop bound": (matmul_static_runtime_loop, (TILE,), 0),
    "dynamic, run-time width": (matmul_tiled_dynamic, (TILE,), SHARED_BYTES),
    "dynamic, compile-time width": (matmul_dynamic_compile_time, (), SHARED_BYTES),
    "dynamic, run-time width, uint64 indices": (matmul_dynamic_unsigned, (TILE,), SHARED_BYTES),
}


def launch(name, A, B, C):
    kernel, extra, shared_bytes = VARIANTS[name]
    grid = (C.shape[1] // TILE, C.shape[0] // TILE)
    kernel[grid, (TILE, TILE), 0, shared_bytes](A, B, C, *extra)


def loop_counts(ptx_text):
    """Per float32 FMA of the innermost loop: its instructions by kind (course.ptx.instruction_mix)."""
    from course.ptx import innermost_loop, instruction_mix

    loop = instruction_mix(innermost_loop(ptx_text))
    fmas = loop["float32 FMA"]
    return dict(fmas_in_loop=fmas, per_fma={kind: count / fmas for kind, count in sorted(loop.items())})


def ptx_counts(example=None):
    """loop_counts of every variant, compiled for float32 matrices (in CPU mode too: course.ptx)."""
    from course.ptx import ptx_of_all

    a = np.zeros((TILE, TILE), np.float32) if example is None else example
    texts = ptx_of_all([(kernel, (a, a, a, *extra)) for kernel, extra, _ in VARIANTS.values()])
    return {name: loop_counts(text) for name, text in zip(VARIANTS, texts, strict=True)}


def measure(n=4096):
    """TFLOP/s of every variant at n^3 (CUDA events, median), its error against torch, and its PTX counts."""
    import torch

    from bench.common import time_ms

    torch.backends.cuda.matmul.allow_tf32 = False
    A, B = torch.rand(n, n, device="cuda"), torch.rand(n, n, device="cuda")
    reference = A.double() @ B.double()
    rows = {}
    for name in VARIANTS:
        C = torch.full_like(A, float("nan"))
        launch(name, A, B, C)  # compiles
        torch.cuda.synchronize()
        error = ((C.double() - reference).norm() / reference.norm()).item()
        ms, _ = time_ms(lambda name=name, C=C: launch(name, A, B, C), budget_s=0.6, max_reps=9)
        rows[name] = dict(ms=ms, tflops=2 * n**3 / ms / 1e9, rel_error=error)
    return dict(n=n, tile=TILE, variants=rows)


def show(records, counts=None):
    """TFLOP/s per variant and device; with `counts` (ptx_counts()), the inner loop's work per FMA."""
    for record in records:
        data = record.data
        print(record.header())
        base = data["variants"]["static, compile-time width"]["tflops"]
        for name, row in data["variants"].items():
            print(f"  {name:42} {row['tflops']:6.2f} TFLOP/s  {base / row['tflops']:5.2f}x the static "
                  f"kernel's time  (error {row['rel_error']:.0e})")
    if counts:
        print("PTX of the inner loop, per float32 FMA (compiled for sm_90 here, no GPU needed):")
        for name, row in counts.items():
            per = row["per_fma"]
            print(f"  {name:42} {row['fmas_in_loop']:3} FMAs in the loop; per FMA: "
                  f"{per.get('64-bit integer', 0):5.1f} 64-bit integer, {per.get('32-bit integer', 0):4.1f} "
                  f"32-bit integer, {per.get('shared load', 0):4.1f} shared loads")
