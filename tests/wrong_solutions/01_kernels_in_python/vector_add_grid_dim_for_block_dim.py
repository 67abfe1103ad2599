"""Uses gridDim.x where blockDim.x belongs: right only when the grid has as many blocks as a block has
threads."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'WriteConflictError'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.blockIdx.x * cuda.gridDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = a[i] + b[i]
'''
