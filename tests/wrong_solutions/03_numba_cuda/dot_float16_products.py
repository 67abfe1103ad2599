"""Keeps the products in a float16 shared array: 11 bits of precision for the block sums."""

REPLACES = 'dot_solution'
FAILS = {'check_dot': 'wrong'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def dot(a, b, out):
    products = cuda.shared.array(0, np.float16)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    products[t] = a[i] * b[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            products[t] += products[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, np.float32(products[0]))
'''
