"""Sizes the dynamic shared array with float64's itemsize: right values, but every block holds twice the
shared memory its float32 products need, which limits how many blocks fit on a multiprocessor."""

REPLACES = 'launch_dot_solution'
FAILS = {'check_dot': 'bytes of dynamic shared memory per block; the budget is'}
FAMILY = 'memory'
SOURCE = '''
def launch_dot(kernel, a, b, out, threads):
    blocks = cdiv(a.size, threads)
    shared_bytes = threads * np.dtype(np.float64).itemsize
    kernel[blocks, threads, 0, shared_bytes](a, b, out)
'''
