"""Thread 0 of block 0 calls np.dot on the whole arrays."""

REPLACES = 'dot_solution'
FAILS = {'check_dot': 'rejects kernel `dot`'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def dot(a, b, out):
    if cuda.grid(1) == 0:
        out[0] = np.dot(a, b)
'''
