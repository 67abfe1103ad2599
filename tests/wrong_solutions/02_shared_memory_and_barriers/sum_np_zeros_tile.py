"""Makes the tile with np.zeros instead of cuda.shared.array: a kernel cannot allocate arrays."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'rejects kernel `block_sum`'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    tile = np.zeros(THREADS, dtype=np.float32)
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
