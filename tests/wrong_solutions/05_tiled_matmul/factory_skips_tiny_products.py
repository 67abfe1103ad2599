"""Skips products below 1e-12 as negligible: right on inputs in [-1, 1], the only ones the check used to draw,
and wrong where a and b hold small values only, which the task allows."""

FAMILY = "inputs"
REPLACES = 'make_tiled_matmul_solution'
FAILS = {'check_make_tiled_matmul': 'gives wrong results'}
SOURCE = '''
def make_tiled_matmul(T):
    @cuda.jit
    def matmul(a, b, c):
        sA = cuda.shared.array((T, T), float32)
        sB = cuda.shared.array((T, T), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        m, k = a.shape
        n = b.shape[1]
        acc = float32(0.0)
        for k0 in range(0, k, T):
            sA[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
            sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
            cuda.syncthreads()
            for j in range(T):
                product = sA[ty, j] * sB[j, tx]
                if abs(product) > float32(1e-12):
                    acc += product
            cuda.syncthreads()
        if row < m and col < n:
            c[row, col] = acc

    return matmul
'''
