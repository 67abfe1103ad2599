"""Every thread loads its element into the tile, but only the first warp (ty == 0) writes the tile back, each
of its threads looping over a column of the tile. Coalesced and free of bank conflicts, but 32 threads of 1024
do the whole store phase."""

FAMILY = "method"
REPLACES = 'transpose_solution'
FAILS = {'check_transpose': 'element accesses in its busiest thread'}
SOURCE = '''
@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((32, 33), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * 32 + ty, cuda.blockIdx.x * 32 + tx
    if row < a.shape[0] and col < a.shape[1]:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    if ty == 0:
        for r in range(32):
            out_row, out_col = cuda.blockIdx.x * 32 + r, cuda.blockIdx.y * 32 + tx
            if out_row < out.shape[0] and out_col < out.shape[1]:
                out[out_row, out_col] = tile[tx, r]
'''
