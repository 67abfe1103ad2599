"""Probe (issue #28, step 1): Hopper's wgmma, called from a Numba kernel, on operands in shared memory.

Usage:  python3 bench/hopper_wgmma_probe.py [--out DIR]     # on an H100 or H200

A Numba kernel (one warpgroup, 128 threads) copies A (64 x 16) and B (16 x N, stored transposed) in bf16
into shared memory in the no-swizzle core-matrix layout of bench/hopper/wgmma.py, fences them into the
async proxy, and calls a linked CUDA C++ function that builds the two matrix descriptors and issues
``wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16``. numba-cuda 0.30 compiles for ``sm_90a`` on a
device of compute capability 9.0 (its codegen adds the "a"), which wgmma needs. Checked against the
float32 product of the same bf16 values (with the descriptor's two byte offsets read as the PTX ISA's
no-swizzle K-major layout has them: leading = between core matrices along K). Then the
instruction alone: ``rounds`` m64n256k16 products back to back per warpgroup, several warpgroups per SM,
timed with CUDA events: TFLOP/s, against the recorded figure of mma.sync alone. Writes
hopper_wgmma_probe_<device>.json.
"""

import argparse
import math
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda, uint16  # noqa: E402

from bench.common import provenance, write_json  # noqa: E402
from bench.hopper.wgmma import source  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
CONVENTIONS = {"leading = K step (128 B), stride = M/N step (256 B)": (128, 256)}
SWAPPED = ("The other reading (leading = the M/N step, stride = the K step) makes wgmma read outside the "
           "shared memory: compute-sanitizer reports 'Out-of-range shared or local address' in the first "
           "probe and the context is lost, so it is not run here.")
FLOPS_PER_WGMMA = 2 * 64 * 256 * 16


def core_matrix_order(matrix: np.ndarray) -> np.ndarray:
    """A rows x 16 matrix of bf16 bits, K contiguous, as core matrices one after the other: the 8 x 8 core
    matrix (row block r, k block c) at element (2 r + c) * 64."""
    rows = matrix.shape[0]
    return matrix.reshape(rows // 8, 8, 2, 8).transpose(0, 2, 1, 3).reshape(-1).copy()


def bits(tensor: torch.Tensor) -> np.ndarray:
    """A bf16 tensor's 16-bit patterns as a NumPy array."""
    return tensor.view(torch.int16).numpy().view(np.uint16)


def build(n_sizes):
    link = [cuda.CUSource(source(n_sizes))]
    fence = cuda.declare_device("fence_proxy_async", "int32()", link=link)
    once = {n: cuda.declare_device(f"wgmma_m64n{n}k16", "UniTuple(float32, 4)(int32, int32, int32, int32)",
                                   link=link) for n in n_sizes}
    loop = cuda.declare_device("wgmma_loop_m64n256k16",
                               "UniTuple(float32, 4)(int32, int32, int32, int32, int32)", link=link)
    return fence, once, loop


def _probe(fence, wgmma, n):
    """A kernel that computes one m64n{n}k16 product and writes the first 8 columns of it."""
    def probe(a_bits, bt_bits, out, leading, stride):
        shared = cuda.shared.array(0, uint16)
        t = cuda.threadIdx.x
        for i in range(t, 64 * 16, 128):
            shared[i] = a_bits[i]
        for i in range(t, n * 16, 128):
            shared[1024 + i] = bt_bits[i]
        fence()
        cuda.syncthreads()
        d = wgmma(0, 2048, leading, stride)
        w, lane = t // 32, t % 32
        g, q = lane // 4, lane % 4
        out[16 * w + g, 2 * q] = d[0]
        out[16 * w + g, 2 * q + 1] = d[1]
        out[16 * w + g + 8, 2 * q] = d[2]
        out[16 * w + g + 8, 2 * q + 1] = d[3]
    return cuda.jit(probe)


def kernels(fence, once, loop):
    made = {n: _probe(fence, wgmma, n) for n, wgmma in once.items()}

    def throughput(a_bits, bt_bits, out, leading, stride, rounds):
        shared = cuda.shared.array(0, uint16)
        t = cuda.threadIdx.x
        for i in range(t, 64 * 16, 128):
            shared[i] = a_bits[i]
        for i in range(t, 256 * 16, 128):
            shared[1024 + i] = bt_bits[i]
        fence()
        cuda.syncthreads()
        d = loop(0, 2048, leading, stride, rounds)
        row = cuda.blockIdx.x * 128 + t
        out[row, 0], out[row, 1], out[row, 2], out[row, 3] = d[0], d[1], d[2], d[3]
    return made, cuda.jit(throughput)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args()
    sizes = (8, 256)
    made, throughput = kernels(*build(sizes))
    torch.manual_seed(0)
    a = torch.randn(64, 16).bfloat16()
    result = {"correctness": [], "throughput": [], "swapped_offsets": SWAPPED}
    for n in sizes:
        b = torch.randn(16, n).bfloat16()
        expected = (a.float() @ b.float()).numpy()[:, :8]
        a_bits = cuda.to_device(core_matrix_order(bits(a)))
        bt_bits = cuda.to_device(core_matrix_order(bits(b.t().contiguous())))
        for name, (leading, stride) in CONVENTIONS.items():
            out = cuda.to_device(np.full((64, 8), np.nan, np.float32))
            made[n][1, 128, 0, 2048 + n * 32](a_bits, bt_bits, out, leading, stride)
            got = out.copy_to_host()
            finite = np.isfinite(got).any()
            error = float(np.nanmax(np.abs(got - expected)) / np.abs(expected).max()) if finite else math.nan
            result["correctness"].append({"n": n, "convention": name, "max_relative_error": error,
                                          "right": bool(np.allclose(got, expected, rtol=1e-3, atol=1e-3))})
            print(f"m64n{n}k16, {name}: max relative error {error:.2e}", flush=True)
    right = next((c for c in result["correctness"] if c["right"] and c["n"] == 256), None)
    if right is not None:
        leading, stride = CONVENTIONS[right["convention"]]
        b = torch.randn(16, 256).bfloat16()
        a_bits = cuda.to_device(core_matrix_order(bits(a)))
        bt_bits = cuda.to_device(core_matrix_order(bits(b.t().contiguous())))
        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
        for per_sm in (1, 2, 4):
            blocks, rounds = sms * per_sm, 20000
            out = cuda.device_array((blocks * 128, 4), np.float32)
            throughput[blocks, 128, 0, 2048 + 256 * 32](a_bits, bt_bits, out, leading, stride, 10)
            cuda.synchronize()
            start, stop = cuda.event(), cuda.event()
            start.record()
            throughput[blocks, 128, 0, 2048 + 256 * 32](a_bits, bt_bits, out, leading, stride, rounds)
            stop.record()
            stop.synchronize()
            ms = cuda.event_elapsed_time(start, stop)
            tflops = blocks * rounds * FLOPS_PER_WGMMA / ms / 1e9
            result["throughput"].append({"warpgroups_per_sm": per_sm, "blocks": blocks, "rounds": rounds,
                                         "ms": ms, "tflops": tflops})
            print(f"m64n256k16 back to back, {per_sm} warpgroup(s) per SM: {tflops:.0f} TFLOP/s", flush=True)
    result["provenance"] = provenance(torch.cuda.get_device_name())
    print(write_json(args.out, "hopper_wgmma_probe", result))


if __name__ == "__main__":
    main()
