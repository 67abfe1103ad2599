"""Takes the row from threadIdx.x and the column from threadIdx.y while loading tiles as in the lesson: right
on a 1 x 1 x 1 product, wrong on anything larger (the check must say so, not blame the read budget)."""

FAMILY = "index"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'gives wrong results'}
SOURCE = '''
@cuda.jit
def tiled_matmul(a, b, c):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + tx
    col = cuda.blockIdx.x * TILE + ty
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
'''
