"""No shared memory: reads are coalesced but each warp writes 32 different rows of out."""

FAMILY = "method"
REPLACES = 'transpose_solution'
FAILS = {'check_transpose': 'sector transfers of global memory'}
SOURCE = '''
@cuda.jit
def transpose(a, out):
    row = cuda.blockIdx.y * 32 + cuda.threadIdx.y
    col = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    if row < a.shape[0] and col < a.shape[1]:
        out[col, row] = a[row, col]
'''
