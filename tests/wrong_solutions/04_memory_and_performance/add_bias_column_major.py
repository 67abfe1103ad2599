"""Column-major mapping: right values, but a warp touches 32 different rows (uncoalesced)."""

FAMILY = "method"
REPLACES = 'add_bias_solution'
FAILS = {'check_add_bias': 'sector transfers of global memory'}
SOURCE = '''
@cuda.jit
def add_bias(a, bias, out):
    rows, cols = a.shape
    i = cuda.grid(1)
    if i < rows * cols:
        row = i % rows
        col = i // rows
        out[row, col] = a[row, col] + bias[col]
'''
