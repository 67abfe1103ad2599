"""Caches the bias in a shared array of 64 floats, one element per thread: fine while cols <= 64."""

FAMILY = "shapes"
REPLACES = 'add_bias_solution'
FAILS = {'check_add_bias': 'barriers completed, summed over blocks; the budget is 0'}
SOURCE = '''
@cuda.jit
def add_bias(a, bias, out):
    sbias = cuda.shared.array(64, float32)
    rows, cols = a.shape
    t = cuda.threadIdx.x
    if t < cols:
        sbias[t] = bias[t]
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < rows * cols:
        row = i // cols
        col = i % cols
        out[row, col] = a[row, col] + sbias[col]
'''
