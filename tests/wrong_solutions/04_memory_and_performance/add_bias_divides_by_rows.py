"""Splits i with the number of rows instead of columns (row = i // rows, col = i % rows): the coalesced
mapping when the matrix is square, elements missed or out of bounds otherwise."""

FAMILY = "shapes"
REPLACES = 'add_bias_solution'
FAILS = {'check_add_bias': 'add_bias'}
SOURCE = '''
@cuda.jit
def add_bias(a, bias, out):
    rows, cols = a.shape
    i = cuda.grid(1)
    row = i // rows
    col = i % rows
    if row < rows and col < cols:
        out[row, col] = a[row, col] + bias[col]
'''
