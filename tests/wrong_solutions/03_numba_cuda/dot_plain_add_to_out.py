"""Blocks add their totals with `out[0] += total`: a race between blocks."""

REPLACES = 'dot_solution'
FAILS = {'check_dot': 'atomic'}
FAMILY = 'sync'
SOURCE = '''
@cuda.jit
def dot(a, b, out):
    products = cuda.shared.array(0, np.float32)
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
        out[0] += products[0]
'''
