"""Declares the tiles as float16 to halve the shared memory: exact on small integers, but every other float
loses about 3 of its 7 significant digits."""

FAMILY = "inputs"
REPLACES = 'make_tiled_matmul_solution'
FAILS = {'check_make_tiled_matmul': 'gives wrong results'}
SOURCE = '''
from numba.types import float16


def make_tiled_matmul(T):
    @cuda.jit
    def matmul(a, b, c):
        sA = cuda.shared.array((T, T), float16)
        sB = cuda.shared.array((T, T), float16)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        m, k = a.shape
        n = b.shape[1]
        acc = float32(0.0)
        for k0 in range(0, k, T):
            sA[ty, tx] = float16(a[row, k0 + tx]) if row < m and k0 + tx < k else float16(0.0)
            sB[ty, tx] = float16(b[k0 + ty, col]) if k0 + ty < k and col < n else float16(0.0)
            cuda.syncthreads()
            for j in range(T):
                acc += float32(sA[ty, j]) * float32(sB[j, tx])
            cuda.syncthreads()
        if row < m and col < n:
            c[row, col] = acc

    return matmul
'''
