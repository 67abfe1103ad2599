"""The factory defines the kernel but forgets to return it."""

FAMILY = "index"
REPLACES = 'make_tiled_matmul_solution'
FAILS = {'check_make_tiled_matmul': 'returned None'}
SOURCE = '''
def make_tiled_matmul(T):
    @cuda.jit
    def tiled_matmul_T(a, b, c):
        sA = cuda.shared.array((T, T), float32)
        sB = cuda.shared.array((T, T), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        m, k = a.shape
        n = b.shape[1]
        acc = float32(0.0)
        for k0 in range(0, k, T):
            if row < m and k0 + tx < k:
                sA[ty, tx] = a[row, k0 + tx]
            else:
                sA[ty, tx] = 0.0
            if k0 + ty < k and col < n:
                sB[ty, tx] = b[k0 + ty, col]
            else:
                sB[ty, tx] = 0.0
            cuda.syncthreads()
            for j in range(T):
                acc += sA[ty, j] * sB[j, tx]
            cuda.syncthreads()
        if row < m and col < n:
            c[row, col] = acc

    pass
'''
