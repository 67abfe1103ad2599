"""Treats the value 0 as padding and skips it: bin 0 is never counted."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'wrong'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < values.size:
        v = values[i]
        if v > 0:
            cuda.atomic.add(local, v, 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(counts, t, local[t])
'''
