"""Fused row softmax (float32) in Numba CUDA: one block per row, tree reductions in shared memory.

The same algorithm as the exercise of Part 6 and as ``cuda_cpp/kernels.cu`` (``softmax_rows``): each thread
walks its columns t, t + THREADS, ... for the row maximum, the block combines the partial maxima in shared
memory, then the same for the sum of exponentials, then every thread writes its outputs. Exponentials are
taken in base 2 (x · log2(e), then ``math.exp2``: one hardware instruction), as in the C++ and Triton
versions. Any number of columns.
"""

import math

from numba import cuda, float32

LOG2E = float32(1.0 / math.log(2.0))
NEG_INF = float32(-math.inf)


def make_softmax_rows(THREADS=256):
    """A row-softmax kernel for blocks of THREADS threads (a power of 2) and its launcher(x, out)."""

    @cuda.jit
    def kernel(x, out):
        scratch = cuda.shared.array(THREADS, float32)
        row = cuda.blockIdx.x
        t = cuda.threadIdx.x
        cols = x.shape[1]
        m = NEG_INF
        for j in range(t, cols, THREADS):
            m = max(m, x[row, j])
        scratch[t] = m
        cuda.syncthreads()
        s = THREADS // 2
        while s > 0:
            if t < s:
                scratch[t] = max(scratch[t], scratch[t + s])
            cuda.syncthreads()
            s //= 2
        m = scratch[0] * LOG2E
        cuda.syncthreads()  # everyone has read the max before scratch holds sums
        total = float32(0.0)
        for j in range(t, cols, THREADS):
            total += math.exp2(x[row, j] * LOG2E - m)
        scratch[t] = total
        cuda.syncthreads()
        s = THREADS // 2
        while s > 0:
            if t < s:
                scratch[t] += scratch[t + s]
            cuda.syncthreads()
            s //= 2
        inv = float32(1.0) / scratch[0]
        for j in range(t, cols, THREADS):
            out[row, j] = math.exp2(x[row, j] * LOG2E - m) * inv

    def launch(x, out):
        kernel[x.shape[0], THREADS](x, out)

    launch.kernel = kernel
    return launch
