"""Collects the two inputs in a Python list: a GPU kernel has no lists."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'needs memory that a GPU kernel cannot allocate'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        pair = [a[i], b[i]]
        out[i] = pair[0] + pair[1]
'''
