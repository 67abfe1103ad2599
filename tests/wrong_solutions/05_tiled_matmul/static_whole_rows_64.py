"""Loads whole 16 x 64 panels of a and b in one step (one barrier), sized for K <= 64: wrong, or out of
bounds, for a larger K, and it holds four times the shared memory of two tiles."""

FAMILY = "method"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'static shared memory'}
SOURCE = '''
@cuda.jit
def tiled_matmul(a, b, c):
    sA = cuda.shared.array((TILE, 64), float32)
    sB = cuda.shared.array((64, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    for k0 in range(0, 64, TILE):
        sA[ty, k0 + tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        sB[k0 + ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
    cuda.syncthreads()
    acc = float32(0.0)
    for j in range(64):
        acc += sA[ty, j] * sB[j, tx]
    if row < m and col < n:
        c[row, col] = acc
'''
