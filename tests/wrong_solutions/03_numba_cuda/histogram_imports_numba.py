"""Imports cuda inside the kernel."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'A kernel cannot import anything'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    from numba import cuda
    local = cuda.shared.array(BINS, np.int32)
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
