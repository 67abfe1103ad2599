"""The tiled matmul kernels of the recorded GPU leaderboard (bench/gpu_leaderboard.py): the Part 5 solution at
two tile widths, the naive kernel of Part 3, and a hostile kernel that skips its work on the benchmark's
shape. Each goes through the grader's route: described as a spec, sent as JSON, rebuilt, compiled by Numba."""

from numba import cuda, float32

TILE = 16
WIDE = 32
BENCHMARK_M = 2048


@cuda.jit
def naive(a, b, c):
    row, col = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = float32(0.0)
        for j in range(a.shape[1]):
            acc += a[row, j] * b[j, col]
        c[row, col] = acc


@cuda.jit
def tiled16(a, b, c):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    acc = float32(0.0)
    for k0 in range(0, k, TILE):
        sA[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc


@cuda.jit
def tiled32(a, b, c):
    sA = cuda.shared.array((WIDE, WIDE), float32)
    sB = cuda.shared.array((WIDE, WIDE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * WIDE + ty
    col = cuda.blockIdx.x * WIDE + tx
    m, k = a.shape
    n = b.shape[1]
    acc = float32(0.0)
    for k0 in range(0, k, WIDE):
        sA[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(WIDE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc


@cuda.jit
def shape_detector(a, b, c):
    """Right on every size the CPU checks use; on the benchmark's shape it computes only the first tile
    column of k, a fraction of the work."""
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    stop = TILE if m == BENCHMARK_M else k
    acc = float32(0.0)
    for k0 in range(0, stop, TILE):
        sA[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc


BLOCKS = {"naive": 16, "tiled16": TILE, "tiled32": WIDE, "shape_detector": TILE}
