"""The tile is np.float16 to save shared memory: 11 bits of precision and nothing above 65504."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'wrong'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(THREADS, np.float16)
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
    if t == 0:
        partial[cuda.blockIdx.x] = tile[0]
'''
