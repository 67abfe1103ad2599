"""Computes the global index with 64 threads per block written as a number."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'wrong'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.blockIdx.x * 64 + t
    if i < values.size:
        cuda.atomic.add(local, values[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(counts, t, local[t])
'''
