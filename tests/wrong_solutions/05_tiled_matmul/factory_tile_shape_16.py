"""Declares the tiles as (16, 16) whatever T is, and indexes them with T: right for T = 8 and T = 16, but the
T = 8 kernel holds four times the shared memory it uses (fewer blocks fit on an SM)."""

FAMILY = "shapes"
REPLACES = 'make_tiled_matmul_solution'
FAILS = {'check_make_tiled_matmul': 'static shared memory'}
SOURCE = '''
def make_tiled_matmul(T):
    @cuda.jit
    def matmul(a, b, c):
        sA = cuda.shared.array((16, 16), float32)
        sB = cuda.shared.array((16, 16), float32)
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
                acc += sA[ty, j] * sB[j, tx]
            cuda.syncthreads()
        if row < m and col < n:
            c[row, col] = acc

    return matmul
'''
