"""Counts its launches in a module-level NumPy array: the GPU sees that array as a read-only constant."""

REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'read-only constant inside a kernel'}
FAMILY = 'compiler'
SOURCE = '''
LAUNCHES = np.zeros(1, dtype=np.int32)


@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i == 0:
        LAUNCHES[0] += 1
    if i < out.size:
        out[i] = a[i] + b[i]
'''
