"""Edge tiles are not zero-padded: threads outside the matrices skip their store, so the inner product reads
shared slots nobody wrote."""

FAMILY = "index"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'UninitializedReadError'}
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
        if row < m and k0 + tx < k:
            sA[ty, tx] = a[row, k0 + tx]
        if k0 + ty < k and col < n:
            sB[ty, tx] = b[k0 + ty, col]
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
