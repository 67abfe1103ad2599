"""No barrier between the reduction steps: a thread reads a partial sum another thread is still writing."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'RaceError'}
FAMILY = 'sync'
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
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = tile[0]
'''
