"""Part 5's kernel: one buffer per operand and two barriers per tile."""

REPLACES = 'matmul_double_buffered_solution'
FAMILY = 'method'
FAILS = {'check_double_buffered_matmul': 'one buffer per operand, where the task asks for two'}
SOURCE = '''
@cuda.jit
def matmul_double_buffered(a, b, c):
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
        sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
