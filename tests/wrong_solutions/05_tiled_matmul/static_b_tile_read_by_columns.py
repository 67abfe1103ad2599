"""Loads the tile of b column by column: thread (ty, tx) reads b[k0 + tx, bx·T + ty] into sB[tx, ty]. The tile
holds the right values, but neighbouring threads read elements a row of b apart (a 32-byte sector each) and
store them 16 words apart (a few banks): right values, several times the sectors."""

FAMILY = "method"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'sector transfers of global memory'}
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
        b_col = cuda.blockIdx.x * TILE + ty
        sB[tx, ty] = b[k0 + tx, b_col] if k0 + tx < k and b_col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
