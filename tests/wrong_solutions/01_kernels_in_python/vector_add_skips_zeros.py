"""Writes only where an input is nonzero, assuming out starts at 0: zero elements are never written."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'never written'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        x, y = a[i], b[i]
        if x != 0.0 or y != 0.0:
            out[i] = x + y
'''
