"""Guard hard-codes the size of the example (10) instead of the array's size."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'OutOfBoundsError'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < 10:
        out[i] = a[i] + b[i]
'''
