"""Every thread adds its product to out[0] with an atomic: right, but n atomics queue up on one element."""

REPLACES = 'dot_solution'
FAILS = {'check_dot': 'an atomic per thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def dot(a, b, out):
    products = cuda.shared.array(0, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    products[t] = a[i] * b[i] if i < a.size else 0.0
    if i < a.size:
        cuda.atomic.add(out, 0, products[t])
'''
