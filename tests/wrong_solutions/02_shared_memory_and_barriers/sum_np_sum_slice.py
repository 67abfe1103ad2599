"""Thread 0 calls np.sum on its block's slice of a (this compiles for a GPU): one thread does all the work."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'np.sum on a slice'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    if cuda.threadIdx.x == 0:
        start = cuda.blockIdx.x * THREADS
        partial[cuda.blockIdx.x] = np.sum(a[start:start + THREADS])
'''
