"""Keeps one partial sum per tile step in a local array of 9, enough for K up to 144, past every hand-picked K
(131): right on those, out of bounds on the larger K the task allows."""

FAMILY = "shapes"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'partial[9]'}
SOURCE = '''
@cuda.jit
def tiled_matmul(a, b, c):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    partial = cuda.local.array(9, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    steps = 0
    for k0 in range(0, k, TILE):
        sA[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        step_sum = float32(0.0)
        for j in range(TILE):
            step_sum += sA[ty, j] * sB[j, tx]
        partial[steps] = step_sum
        steps += 1
        cuda.syncthreads()
    acc = float32(0.0)
    for s in range(steps):
        acc += partial[s]
    if row < m and col < n:
        c[row, col] = acc
'''
