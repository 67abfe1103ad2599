"""Writes partial only for the first 32 blocks ("the arrays are at most 1000 long"): right on every
hand-picked size, wrong on an array of more than 1024 elements, which the drawn cases reach."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'never written'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else np.float32(0.0)
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            tile[t] += tile[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0 and cuda.blockIdx.x < 32:
        partial[cuda.blockIdx.x] = tile[0]
'''
