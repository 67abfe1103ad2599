"""Loads the b tile column by column (thread (ty, tx) reads b[k0 + tx, col0 + ty] into sB[tx, ty]): the
right values, but a warp's reads are 16 rows apart, several times the 32-byte sectors, and the stores
pile up in a few banks."""

FAMILY = 'method'
REPLACES = 'matmul_double_buffered_solution'
FAILS = {'check_double_buffered_matmul': 'caused by bank conflicts'}
SOURCE = '''
@cuda.jit
def matmul_double_buffered(a, b, c):
    sA = cuda.shared.array((2, TILE, TILE), float32)
    sB = cuda.shared.array((2, TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    sA[0, ty, tx] = a[row, tx] if row < m and tx < k else float32(0.0)
    c0 = cuda.blockIdx.x * TILE
    sB[0, tx, ty] = b[tx, c0 + ty] if tx < k and c0 + ty < n else float32(0.0)
    cuda.syncthreads()
    acc = float32(0.0)
    tiles = (k + TILE - 1) // TILE
    for t in range(tiles):
        this = t % 2
        if t + 1 < tiles:  # the next tiles go into the other buffer
            k0 = (t + 1) * TILE
            sA[1 - this, ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
            sB[1 - this, tx, ty] = b[k0 + tx, c0 + ty] if k0 + tx < k and c0 + ty < n else float32(0.0)
        for j in range(TILE):
            acc += sA[this, ty, j] * sB[this, j, tx]
        cuda.syncthreads()  # tile t + 1 is complete, and nobody reads buffer `this` any more
    if row < m and col < n:
        c[row, col] = acc
'''
