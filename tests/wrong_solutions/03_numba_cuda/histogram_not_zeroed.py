"""The shared histogram is never zeroed: counting starts from garbage."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'UninitializedReadError'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(local, values[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(counts, t, local[t])
'''
