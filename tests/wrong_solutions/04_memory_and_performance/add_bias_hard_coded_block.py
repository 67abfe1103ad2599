"""Computes the thread's index as blockIdx.x * 128 + threadIdx.x: right only while blocks have 128 threads."""

FAMILY = "shapes"
REPLACES = 'add_bias_solution'
FAILS = {'check_add_bias': 'add_bias'}
SOURCE = '''
@cuda.jit
def add_bias(a, bias, out):
    rows, cols = a.shape
    i = cuda.blockIdx.x * 128 + cuda.threadIdx.x
    if i < rows * cols:
        row = i // cols
        col = i % cols
        out[row, col] = a[row, col] + bias[col]
'''
