"""Threads past the end of a leave their shared slot unwritten (no zero padding)."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'UninitializedReadError'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        tile[t] = a[i]
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            tile[t] += tile[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = tile[0]
'''
