"""Declares a static shared array of 1024 floats (the largest block) and launches with no dynamic bytes."""

REPLACES = 'dot_solution'
FAILS = {'check_dot': 'static shared memory'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def dot(a, b, out):
    products = cuda.shared.array(1024, np.float32)
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
        cuda.atomic.add(out, 0, products[0])


def launch_dot(kernel, a, b, out, threads):
    kernel[cdiv(a.size, threads), threads](a, b, out)
'''
