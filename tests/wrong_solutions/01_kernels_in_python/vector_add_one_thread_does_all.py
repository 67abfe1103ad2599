"""Thread 0 adds every element in a loop: right values, no parallelism."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'element accesses in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    if cuda.grid(1) == 0:
        for j in range(out.size):
            out[j] = a[j] + b[j]
'''
