"""Fused row softmax (float32) in Numba CUDA: one block per row, tree reductions in shared memory.

The same algorithm as the exercise of Part 6 and as ``cuda_cpp/kernels.cu`` (``softmax_rows``): each thread
walks its columns t, t + THREADS, ... for the row maximum, the block combines the partial maxima in shared
memory, then the same for the sum of exponentials, then every thread writes its outputs. Exponentials are
taken in base 2 (x · log2(e), then ``math.exp2``: one hardware instruction), as in the C++ and Triton
versions. Any number of columns.

``make_softmax_rows_unsigned`` is the same kernel with every index unsigned. Numba's integers are signed
64-bit, so each ``x[row, j]`` first checks for a negative index (Python's wraparound: ``j < 0`` means
``j + cols``) and ``range(t, cols, THREADS)`` computes its trip count for a step of either sign; the PTX of
``make_softmax_rows`` carries several times the 64-bit integer instructions of the C++ translation (whose
``int`` indices need neither). With ``uint64`` indices and ``while`` loops both go away, as Part 5's
version 17 found for the matmul (``bench/compile_chain.py`` counts them). One difference remains: nvcc and
Numba unroll the ``for`` loops by 4 (four loads in flight per thread), not the ``while`` loops;
``make_softmax_rows_unrolled`` writes that unrolling out.
"""

import math

from numba import cuda, float32, uint64

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


def make_softmax_rows_unsigned(THREADS=256):
    """``make_softmax_rows`` with unsigned indices (no wraparound checks) and ``while`` loops: the same
    algorithm, instruction for instruction closer to the CUDA C++ translation."""
    U = uint64
    STEP, HALF = U(THREADS), U(THREADS // 2)

    @cuda.jit
    def kernel(x, out):
        scratch = cuda.shared.array(THREADS, float32)
        row = U(cuda.blockIdx.x)
        t = U(cuda.threadIdx.x)
        cols = U(x.shape[1])
        m = NEG_INF
        j = t
        while j < cols:
            m = max(m, x[row, j])
            j += STEP
        scratch[t] = m
        cuda.syncthreads()
        s = HALF
        while s > U(0):
            if t < s:
                scratch[t] = max(scratch[t], scratch[t + s])
            cuda.syncthreads()
            s >>= U(1)
        m = scratch[0] * LOG2E
        cuda.syncthreads()  # everyone has read the max before scratch holds sums
        total = float32(0.0)
        j = t
        while j < cols:
            total += math.exp2(x[row, j] * LOG2E - m)
            j += STEP
        scratch[t] = total
        cuda.syncthreads()
        s = HALF
        while s > U(0):
            if t < s:
                scratch[t] += scratch[t + s]
            cuda.syncthreads()
            s >>= U(1)
        inv = float32(1.0) / scratch[0]
        j = t
        while j < cols:
            out[row, j] = math.exp2(x[row, j] * LOG2E - m) * inv
            j += STEP

    def launch(x, out):
        kernel[x.shape[0], THREADS](x, out)

    launch.kernel = kernel
    return launch


def make_softmax_rows_unrolled(THREADS=256):
    """``make_softmax_rows_unsigned`` with each loop over columns unrolled by 4, loads first: four loads in
    flight per thread, as nvcc's (and Numba's own, for ``range`` loops) unrolling gives."""
    U = uint64
    STEP, HALF, FOUR = U(THREADS), U(THREADS // 2), U(4 * THREADS)

    @cuda.jit
    def kernel(x, out):
        scratch = cuda.shared.array(THREADS, float32)
        row = U(cuda.blockIdx.x)
        t = U(cuda.threadIdx.x)
        cols = U(x.shape[1])
        m = NEG_INF
        j = t
        while j + U(3) * STEP < cols:
            a, b, c, d = x[row, j], x[row, j + STEP], x[row, j + U(2) * STEP], x[row, j + U(3) * STEP]
            m = max(m, max(max(a, b), max(c, d)))
            j += FOUR
        while j < cols:
            m = max(m, x[row, j])
            j += STEP
        scratch[t] = m
        cuda.syncthreads()
        s = HALF
        while s > U(0):
            if t < s:
                scratch[t] = max(scratch[t], scratch[t + s])
            cuda.syncthreads()
            s >>= U(1)
        m = scratch[0] * LOG2E
        cuda.syncthreads()  # everyone has read the max before scratch holds sums
        total = float32(0.0)
        j = t
        while j + U(3) * STEP < cols:
            a, b, c, d = x[row, j], x[row, j + STEP], x[row, j + U(2) * STEP], x[row, j + U(3) * STEP]
            total += (math.exp2(a * LOG2E - m) + math.exp2(b * LOG2E - m)) + (
                math.exp2(c * LOG2E - m) + math.exp2(d * LOG2E - m))
            j += FOUR
        while j < cols:
            total += math.exp2(x[row, j] * LOG2E - m)
            j += STEP
        scratch[t] = total
        cuda.syncthreads()
        s = HALF
        while s > U(0):
            if t < s:
                scratch[t] += scratch[t + s]
            cuda.syncthreads()
            s >>= U(1)
        inv = float32(1.0) / scratch[0]
        j = t
        while j + U(3) * STEP < cols:
            a, b, c, d = x[row, j], x[row, j + STEP], x[row, j + U(2) * STEP], x[row, j + U(3) * STEP]
            out[row, j] = math.exp2(a * LOG2E - m) * inv
            out[row, j + STEP] = math.exp2(b * LOG2E - m) * inv
            out[row, j + U(2) * STEP] = math.exp2(c * LOG2E - m) * inv
            out[row, j + U(3) * STEP] = math.exp2(d * LOG2E - m) * inv
            j += FOUR
        while j < cols:
            out[row, j] = math.exp2(x[row, j] * LOG2E - m) * inv
            j += STEP

    def launch(x, out):
        kernel[x.shape[0], THREADS](x, out)

    launch.kernel = kernel
    return launch
