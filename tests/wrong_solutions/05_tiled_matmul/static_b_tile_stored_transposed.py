"""Stores the tile of b transposed, sB[tx, ty] = b[k0 + ty, col], and reads it back as sB[tx, j]: right values
and coalesced reads, but a warp's shared accesses fall 16 words apart, into two banks: thousands of bank
conflicts."""

FAMILY = "method"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'bank conflicts'}
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
    acc = float32(0.0)
    for k0 in range(0, k, TILE):
        sA[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        sB[tx, ty] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[tx, j]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
