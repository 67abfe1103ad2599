"""Declares the shared tiles as int32: exact on integer-valued test matrices, but every fraction is cut
off."""

FAMILY = "inputs"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'gives wrong results'}
SOURCE = '''
from numba import int32


@cuda.jit
def tiled_matmul(a, b, c):
    sA = cuda.shared.array((TILE, TILE), int32)
    sB = cuda.shared.array((TILE, TILE), int32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    acc = float32(0.0)
    for k0 in range(0, k, TILE):
        sA[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
        sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += float32(sA[ty, j] * sB[j, tx])
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
'''
