"""Thread 0 adds up the 32 shared values in a loop: right values, no tree."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else np.float32(0.0)
    cuda.syncthreads()
    if t == 0:
        total = np.float32(0.0)
        for j in range(THREADS):
            total += tile[j]
        partial[cuda.blockIdx.x] = total
'''
