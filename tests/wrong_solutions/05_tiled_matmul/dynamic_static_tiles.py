"""The 'dynamic' kernel ignores the dynamic array and declares static (16, 16) tiles, indexed with t: right
for t <= 16, but the shared memory is not sized at launch, which is what the exercise is about."""

FAMILY = "method"
REPLACES = 'tiled_matmul_dynamic_solution'
FAILS = {'check_tiled_matmul_dynamic': 'static shared memory'}
SOURCE = '''
@cuda.jit
def tiled_matmul_dynamic(a, b, c, t):
    sA = cuda.shared.array((16, 16), float32)
    sB = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * t + ty
    col = cuda.blockIdx.x * t + tx
    m, k = a.shape
    n = b.shape[1]
    acc = float32(0.0)
    for k0 in range(0, k, t):
        sA[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(t):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
