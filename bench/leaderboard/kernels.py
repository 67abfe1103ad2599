"""The matmul kernels of the recorded GPU leaderboard (bench/gpu_leaderboard.py): the course's own naive and
tiled kernels (course/kernels/matmul.py, tiles of 16 and 32) and a hostile kernel that skips its work on the
benchmark's shape. Each goes through the grader's route: described as a spec, sent as JSON, rebuilt,
compiled by Numba."""

from numba import cuda, float32

from course.kernels.matmul import make_tiled_matmul, matmul_naive

TILE = 16
BENCHMARK_M = 2048
naive = matmul_naive
tiled16 = make_tiled_matmul(16).kernel
tiled32 = make_tiled_matmul(32).kernel


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


BLOCKS = {"naive": 16, "tiled16": 16, "tiled32": 32, "shape_detector": TILE}
