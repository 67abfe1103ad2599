"""Thread 0 counts its block's values into a local array and flushes it: each value read once, 16 updates per
block, but one thread does the block's work."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    if cuda.threadIdx.x == 0:
        local = cuda.local.array(BINS, np.int32)
        for b in range(BINS):
            local[b] = 0
        start = cuda.blockIdx.x * cuda.blockDim.x
        for j in range(start, min(start + cuda.blockDim.x, values.size)):
            local[values[j]] += 1
        for b in range(BINS):
            cuda.atomic.add(counts, b, local[b])
'''
