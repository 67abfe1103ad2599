"""Stages the tile in float64: the transpose is exact, but the block holds twice the shared memory and moves
twice the shared-memory bytes the float32 values need."""

REPLACES = 'transpose_solution'
FAILS = {'check_transpose': 'computes in float64 where the task asks for float32'}
FAMILY = 'memory'
SOURCE = '''
from numba import float64


@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((32, 33), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * 32 + ty, cuda.blockIdx.x * 32 + tx
    if row < a.shape[0] and col < a.shape[1]:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    out_row, out_col = cuda.blockIdx.x * 32 + ty, cuda.blockIdx.y * 32 + tx
    if out_row < out.shape[0] and out_col < out.shape[1]:
        out[out_row, out_col] = tile[tx, ty]
'''
