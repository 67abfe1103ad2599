"""Adds each tile step's partial sum straight into c: right only if c starts at zero, which nothing promises
(the check fills it with NaN)."""

FAMILY = "inputs"
REPLACES = 'tiled_matmul_dynamic_solution'
FAILS = {'check_tiled_matmul_dynamic': 'tiled_matmul_dynamic gives wrong results'}
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
    for k0 in range(0, k, t):
        shared[ty * t + tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        shared[b_start + ty * t + tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        partial = float32(0.0)
        for j in range(t):
            partial += shared[ty * t + j] * shared[b_start + j * t + tx]
        if row < m and col < n:
            c[row, col] += partial
        cuda.syncthreads()
'''
