"""Uses threadIdx.x alone: every block recomputes the first 32 elements."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'WriteConflictError'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.threadIdx.x
    if i < out.size:
        out[i] = a[i] + b[i]
'''
