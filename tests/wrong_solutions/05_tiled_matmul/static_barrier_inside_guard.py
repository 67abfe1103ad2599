"""The tile loop sits under `if row < m and col < n:`, so threads past the edge of c skip the barriers."""

FAMILY = "sync"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'BarrierError'}
SOURCE = '''
@cuda.jit
def tiled_matmul(a, b, c):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    if row < m and col < n:
        acc = float32(0.0)
        for k0 in range(0, k, TILE):
            sA[ty, tx] = a[row, k0 + tx] if k0 + tx < k else float32(0.0)
            sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k else float32(0.0)
            cuda.syncthreads()
            for j in range(TILE):
                acc += sA[ty, j] * sB[j, tx]
            cuda.syncthreads()
        c[row, col] = acc
'''
