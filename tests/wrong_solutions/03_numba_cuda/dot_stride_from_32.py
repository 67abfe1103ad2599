"""Starts the tree at stride 16, as for blocks of 32 threads: larger blocks lose most of their products."""

REPLACES = 'dot_solution'
FAILS = {'check_dot': 'starts at a fixed stride'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def dot(a, b, out):
    products = cuda.shared.array(0, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    products[t] = a[i] * b[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = 16
    while stride > 0:
        if t < stride:
            products[t] += products[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, products[0])
'''
