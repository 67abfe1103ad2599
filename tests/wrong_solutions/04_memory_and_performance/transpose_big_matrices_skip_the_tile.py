"""Takes a "fast path" for matrices of a million elements or more that reads a column-wise (uncoalesced) and
skips the tile; every matrix a check can afford to simulate is smaller, so only the code can show the path
no case runs. Such a constant is refused with its line."""

REPLACES = 'transpose_solution'
FAMILY = 'shapes'
FAILS = {'check_transpose': 'larger than every size this check runs'}
SOURCE = '''
@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((32, 33), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * 32 + ty, cuda.blockIdx.x * 32 + tx
    if a.shape[0] * a.shape[1] >= 1 << 20:
        if row < a.shape[0] and col < a.shape[1]:
            out[col, row] = a[col, row]
        return
    if row < a.shape[0] and col < a.shape[1]:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    out_row, out_col = cuda.blockIdx.x * 32 + ty, cuda.blockIdx.y * 32 + tx
    if out_row < out.shape[0] and out_col < out.shape[1]:
        out[out_row, out_col] = tile[tx, ty]
'''
