"""Counts the elements it handled in a module-level NumPy array: Numba freezes such arrays into the kernel as
constants, so writing to one does not compile."""

FAMILY = "compiler"
REPLACES = 'add_bias_solution'
FAILS = {'check_add_bias': 'CUDA compiler'}
SOURCE = '''
DONE = np.zeros(1, np.int32)


@cuda.jit
def add_bias(a, bias, out):
    rows, cols = a.shape
    i = cuda.grid(1)
    if i < rows * cols:
        out[i // cols, i % cols] = a[i // cols, i % cols] + bias[i % cols]
        DONE[0] = 1
'''
