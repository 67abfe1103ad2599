"""Keeps the private histogram in a Python list."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'rejects kernel `histogram`'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    i = cuda.grid(1)
    local = [0] * BINS
    if i < values.size:
        local[values[i]] += 1
        cuda.atomic.add(counts, values[i], local[values[i]])
'''
