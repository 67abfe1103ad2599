"""The tile is float64 "for accuracy": the sums stay within tolerance, but the block holds twice the shared
memory it needs and a GPU runs the float64 adds many times slower than the float32 the task asks for."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'computes in float64 where the task asks for float32'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(THREADS, np.float64)
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
