"""Thread t < BINS scans all the block's values and counts those equal to t: no atomics on shared memory, but
every value is read 16 times."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'global reads'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * cuda.blockDim.x
    if t < BINS:
        found = 0
        for j in range(start, min(start + cuda.blockDim.x, values.size)):
            if values[j] == t:
                found += 1
        cuda.atomic.add(counts, t, found)
'''
