"""Numbers elements thread-major (threadIdx.x * gridDim.x + blockIdx.x): every element is covered, but the
lanes of a warp read addresses far apart (uncoalesced)."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'sector transfers of global memory'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x
    if i < out.size:
        out[i] = a[i] + b[i]
'''
