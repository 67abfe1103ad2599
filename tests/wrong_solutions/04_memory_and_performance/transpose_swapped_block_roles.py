"""Reads the tile at rows blockIdx.x*32, columns blockIdx.y*32 (the roles of the block indices swapped in both
the load and the store): right whenever the grid has as many blocks along x as along y."""

FAMILY = "shapes"
REPLACES = 'transpose_solution'
FAILS = {'check_transpose': 'transpose'}
SOURCE = '''
@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((32, 33), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.x * 32 + ty, cuda.blockIdx.y * 32 + tx
    if row < a.shape[0] and col < a.shape[1]:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    out_row, out_col = cuda.blockIdx.y * 32 + ty, cuda.blockIdx.x * 32 + tx
    if out_row < out.shape[0] and out_col < out.shape[1]:
        out[out_row, out_col] = tile[tx, ty]
'''
