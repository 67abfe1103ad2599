"""Missing guard: threads of the last block read and write past the end of the arrays."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'OutOfBoundsError'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]
'''
