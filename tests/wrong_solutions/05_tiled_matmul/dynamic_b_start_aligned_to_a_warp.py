"""Starts sB at t·t rounded up to a multiple of 32 floats, "aligned to a warp": the same as t·t at the widths
the check used to launch (8, 16: t·t is a multiple of 32), past the end of the dynamic array at widths like 12
or 5, which the task allows."""

FAMILY = "shapes"
REPLACES = 'tiled_matmul_dynamic_solution'
FAILS = {'check_tiled_matmul_dynamic': 'OutOfBoundsError'}
SOURCE = '''
@cuda.jit
def tiled_matmul_dynamic(a, b, c, t):
    shared = cuda.shared.array(0, float32)
    b_start = (t * t + 31) // 32 * 32
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * t + ty
    col = cuda.blockIdx.x * t + tx
    m, k = a.shape
    n = b.shape[1]
    acc = float32(0.0)
    for k0 in range(0, k, t):
        shared[ty * t + tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        shared[b_start + ty * t + tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(t):
            acc += shared[ty * t + j] * shared[b_start + j * t + tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
