"""Half of the threads each add two elements, i and i + half: one element per thread is the task."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'element accesses in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    half = (out.size + 1) // 2
    if i < half:
        out[i] = a[i] + b[i]
        if i + half < out.size:
            out[i + half] = a[i + half] + b[i + half]
'''
