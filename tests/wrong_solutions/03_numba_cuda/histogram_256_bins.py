"""Declares a shared histogram of 256 bins "for any byte value" and uses 16 of them: right counts, but 16
times the shared memory the block needs."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'bytes of static shared memory per block; the budget is 64'}
FAMILY = 'memory'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    local = cuda.shared.array(256, np.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(local, values[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(counts, t, local[t])
'''
