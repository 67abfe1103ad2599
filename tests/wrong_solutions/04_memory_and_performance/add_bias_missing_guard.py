"""No guard: the last block's extra threads index past the end of the matrix."""

FAMILY = "index"
REPLACES = 'add_bias_solution'
FAILS = {'check_add_bias': 'OutOfBoundsError'}
SOURCE = '''
@cuda.jit
def add_bias(a, bias, out):
    rows, cols = a.shape
    i = cuda.grid(1)
    row = i // cols
    col = i % cols
    out[row, col] = a[row, col] + bias[col]
'''
