"""Counts with `local[v] += 1`: threads that hit the same bin overwrite each other."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'reads of shared memory; the budget is'}
FAMILY = 'sync'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    if i < values.size:
        local[values[i]] += 1
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(counts, t, local[t])
'''
