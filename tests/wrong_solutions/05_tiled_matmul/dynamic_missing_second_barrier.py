"""Dynamic version without the second barrier: a write-after-read race on the tiles."""

FAMILY = "sync"
REPLACES = 'tiled_matmul_dynamic_solution'
FAILS = {'check_tiled_matmul_dynamic': 'RaceError'}
SOURCE = '''
@cuda.jit
def tiled_matmul_dynamic(a, b, c, t):
    shared = cuda.shared.array(0, float32)
    b_start = t * t
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * t + ty
    col = cuda.blockIdx.x * t + tx
    m, k = a.shape
    n = b.shape[1]
    acc = float32(0.0)
    for k0 in range(0, k, t):
        if row < m and k0 + tx < k:
            shared[ty * t + tx] = a[row, k0 + tx]
        else:
            shared[ty * t + tx] = 0.0
        if k0 + ty < k and col < n:
            shared[b_start + ty * t + tx] = b[k0 + ty, col]
        else:
            shared[b_start + ty * t + tx] = 0.0
        cuda.syncthreads()
        for j in range(t):
            acc += shared[ty * t + j] * shared[b_start + j * t + tx]
        pass
    if row < m and col < n:
        c[row, col] = acc
'''
