"""No barrier between filling the tile and reading it transposed: a race."""

FAMILY = "sync"
REPLACES = 'transpose_solution'
FAILS = {'check_transpose': 'RaceError'}
SOURCE = '''
@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((32, 33), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * 32 + ty, cuda.blockIdx.x * 32 + tx
    if row < a.shape[0] and col < a.shape[1]:
        tile[ty, tx] = a[row, col]
    out_row, out_col = cuda.blockIdx.x * 32 + ty, cuda.blockIdx.y * 32 + tx
    if out_row < out.shape[0] and out_col < out.shape[1]:
        out[out_row, out_col] = tile[tx, ty]
'''
