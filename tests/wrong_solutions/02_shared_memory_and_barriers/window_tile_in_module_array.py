"""Stores the block's tile in a module-level NumPy array instead of shared memory: a GPU kernel sees that
array as a read-only constant."""

REPLACES = 'window_sum_solution'
FAILS = {'check_window_sum': 'read-only constant inside a kernel'}
FAMILY = 'compiler'
SOURCE = '''
SCRATCH = np.zeros(4096, dtype=np.float32)


@cuda.jit
def window_sum(a, out):
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    if i < n:
        SCRATCH[i] = a[i]
    cuda.syncthreads()
    if i < n:
        total = 0.0
        for k in range(-RADIUS, RADIUS + 1):
            if 0 <= i + k < n:
                total += SCRATCH[i + k]
        out[i] = total
'''
