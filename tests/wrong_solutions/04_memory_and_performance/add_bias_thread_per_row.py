"""One thread per row loops over the columns: right values, but a few threads do all the work and a warp's
threads read 32 different rows."""

FAMILY = "method"
REPLACES = 'add_bias_solution'
FAILS = {'check_add_bias': 'threads that touched memory'}
SOURCE = '''
@cuda.jit
def add_bias(a, bias, out):
    rows, cols = a.shape
    row = cuda.grid(1)
    if row < rows:
        for col in range(cols):
            out[row, col] = a[row, col] + bias[col]
'''
