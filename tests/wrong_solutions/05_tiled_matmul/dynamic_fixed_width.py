"""Ignores the run-time width t and always uses TILE = 16: wrong for the t = 8 launches."""

FAMILY = "shapes"
REPLACES = 'tiled_matmul_dynamic_solution'
FAILS = {'check_tiled_matmul_dynamic': 'tiled_matmul_dynamic'}
SOURCE = '''
@cuda.jit
def tiled_matmul_dynamic(a, b, c, t):
    shared = cuda.shared.array(0, float32)
    b_start = TILE * TILE
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    acc = float32(0.0)
    for k0 in range(0, k, TILE):
        shared[ty * TILE + tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        shared[b_start + ty * TILE + tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += shared[ty * TILE + j] * shared[b_start + j * TILE + tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
