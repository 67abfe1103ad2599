"""Right counts, but one global atomic per value: no privatisation."""

REPLACES = 'histogram_solution'
FAILS = {'check_histogram': 'bytes of static shared memory per block; the task asks for at least 64'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def histogram(values, counts):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(counts, values[i], 1)
'''
