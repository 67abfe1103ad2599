"""Kernels that import the CUDA API by name (`from numba.cuda import grid`) rather than through `cuda.`.

tests/test_gpusim_mlir.py runs them, and a numba_cuda_mlir twin of this file, under gpusim.
"""

from numba import cuda
from numba.cuda import atomic, blockDim, blockIdx, grid, local, shared, shfl_down_sync, syncthreads, threadIdx
from numba.types import float32, int32


@cuda.jit
def reverse_by_name(a, out):
    buf = shared.array(64, int32)
    t = threadIdx.x
    i = blockIdx.x * blockDim.x + t
    buf[t] = a[i]
    syncthreads()
    out[i] = buf[blockDim.x - 1 - t]


@cuda.jit
def reverse_by_name_no_barrier(a, out):
    buf = shared.array(64, int32)
    t = threadIdx.x
    i = blockIdx.x * blockDim.x + t
    buf[t] = a[i]
    out[i] = buf[blockDim.x - 1 - t]


@cuda.jit
def local_sum_and_atomic(a, out):
    i = grid(1)
    acc = local.array(4, float32)
    for k in range(4):
        acc[k] = a[i] * k
    atomic.add(out, 0, acc[0] + acc[1] + acc[2] + acc[3])


@cuda.jit
def warp_sum_by_name(a, out):
    i = grid(1)
    v = a[i]
    offset = 16
    while offset > 0:
        v += shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if threadIdx.x % 32 == 0:
        out[i // 32] = v


@cuda.jit
def shifted_read_by_name(a, out):
    i = grid(1)
    out[i] = a[i + 1]


@cuda.jit
def block_total_by_name(a, out):
    total = shared.array(1, float32)
    if threadIdx.x == 0:
        total[0] = 0
    syncthreads()
    atomic.add(total, 0, a[grid(1)])
    syncthreads()
    if threadIdx.x == 0:
        out[blockIdx.x] = total[0]
