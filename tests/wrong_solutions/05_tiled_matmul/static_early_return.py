"""Threads outside c return early and never reach the barriers the others wait at."""

FAMILY = "sync"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'Error'}
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
    if row >= m or col >= n:
        return
    acc = float32(0.0)
    for k0 in range(0, k, TILE):
        if row < m and k0 + tx < k:
            sA[ty, tx] = a[row, k0 + tx]
        else:
            sA[ty, tx] = 0.0
        if k0 + ty < k and col < n:
            sB[ty, tx] = b[k0 + ty, col]
        else:
            sB[ty, tx] = 0.0
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
