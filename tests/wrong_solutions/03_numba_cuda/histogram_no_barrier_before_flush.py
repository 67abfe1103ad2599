"""No barrier between counting and flushing: a bin is flushed while other threads still add to it."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'RaceError'}
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
        cuda.atomic.add(local, values[i], 1)
    if t < BINS:
        cuda.atomic.add(counts, t, local[t])
'''
