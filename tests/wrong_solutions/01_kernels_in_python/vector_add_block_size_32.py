"""Hard-codes 32 threads per block (blockIdx.x * 32): right only when the launch uses blocks of 32."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'WriteConflictError'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    if i < out.size:
        out[i] = a[i] + b[i]
'''
