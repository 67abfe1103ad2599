"""Guard off by one (`<=`): thread n writes one element past the end."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'OutOfBoundsError'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i <= out.size:
        out[i] = a[i] + b[i]
'''
