"""Guards the store with the load's condition: on non-square edge tiles some outputs are never written."""

FAMILY = "index"
REPLACES = 'transpose_solution'
FAILS = {'check_transpose': 'transpose'}
SOURCE = '''
@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((32, 33), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * 32 + ty, cuda.blockIdx.x * 32 + tx
    inside = row < a.shape[0] and col < a.shape[1]
    if inside:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    out_row, out_col = cuda.blockIdx.x * 32 + ty, cuda.blockIdx.y * 32 + tx
    if inside and out_row < out.shape[0] and out_col < out.shape[1]:
        out[out_row, out_col] = tile[tx, ty]
'''
