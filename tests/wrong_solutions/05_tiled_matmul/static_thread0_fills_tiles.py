"""Thread (0, 0) of each block fills both tiles alone, in a loop: right values and the tiled number of global
reads, but one thread does the loading work of 256."""

FAMILY = "method"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'busiest thread'}
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
        if tx == 0 and ty == 0:
            for r in range(TILE):
                for q in range(TILE):
                    ar, ac = cuda.blockIdx.y * TILE + r, k0 + q
                    sA[r, q] = a[ar, ac] if ar < m and ac < k else float32(0.0)
                    br, bc = k0 + r, cuda.blockIdx.x * TILE + q
                    sB[r, q] = b[br, bc] if br < k and bc < n else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
