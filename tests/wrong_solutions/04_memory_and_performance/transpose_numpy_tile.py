"""Makes the tile with np.zeros: a NumPy allocation inside a kernel, which GPU code cannot do (shared memory
is cuda.shared.array)."""

FAMILY = "compiler"
REPLACES = 'transpose_solution'
FAILS = {'check_transpose': 'CUDA compiler'}
SOURCE = '''
@cuda.jit
def transpose(a, out):
    tile = np.zeros((32, 33), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * 32 + ty, cuda.blockIdx.x * 32 + tx
    if row < a.shape[0] and col < a.shape[1]:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    out_row, out_col = cuda.blockIdx.x * 32 + ty, cuda.blockIdx.y * 32 + tx
    if out_row < out.shape[0] and out_col < out.shape[1]:
        out[out_row, out_col] = tile[tx, ty]
'''
