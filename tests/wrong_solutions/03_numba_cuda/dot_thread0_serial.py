"""Thread 0 adds up the block's products in a loop: right values, no tree."""

REPLACES = 'dot_solution'
FAILS = {'check_dot': 'in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def dot(a, b, out):
    products = cuda.shared.array(0, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    products[t] = a[i] * b[i] if i < a.size else np.float32(0.0)
    cuda.syncthreads()
    if t == 0:
        total = np.float32(0.0)
        for j in range(cuda.blockDim.x):
            total += products[j]
        cuda.atomic.add(out, 0, total)
'''
