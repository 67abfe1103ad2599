"""Writes a block's total only when it is nonzero, assuming partial starts at 0: blocks of zeros are never
written."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'never written'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            tile[t] += tile[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0 and tile[0] != 0.0:
        partial[cuda.blockIdx.x] = tile[0]
'''
