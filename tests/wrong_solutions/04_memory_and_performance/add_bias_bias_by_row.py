"""Adds bias[row] instead of bias[col] (and reads past the bias when rows > cols)."""

FAMILY = "index"
REPLACES = 'add_bias_solution'
FAILS = {'check_add_bias': 'add_bias'}
SOURCE = '''
@cuda.jit
def add_bias(a, bias, out):
    rows, cols = a.shape
    i = cuda.grid(1)
    if i < rows * cols:
        row = i // cols
        col = i % cols
        out[row, col] = a[row, col] + bias[row % cols]
'''
