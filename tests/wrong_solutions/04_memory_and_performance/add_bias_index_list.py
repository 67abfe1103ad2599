"""Keeps (row, col) in a Python list: lists need a memory allocator, which GPU code does not have."""

FAMILY = "compiler"
REPLACES = 'add_bias_solution'
FAILS = {'check_add_bias': 'CUDA compiler'}
SOURCE = '''
@cuda.jit
def add_bias(a, bias, out):
    rows, cols = a.shape
    i = cuda.grid(1)
    if i < rows * cols:
        where = [i // cols, i % cols]
        out[where[0], where[1]] = a[where[0], where[1]] + bias[where[1]]
'''
