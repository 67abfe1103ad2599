"""Reads x[i] from global memory once per sigmoid instead of once: over the read budget."""

FAMILY = "method"
REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'global reads'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    if i < x.size:
        one = float32(1.0)
        s1 = one / (one + math.exp(-x[i]))
        s2 = one / (one + math.exp(-one / (one + math.exp(-x[i]))))
        s3 = one / (one + math.exp(-one / (one + math.exp(-one / (one + math.exp(-x[i]))))))
        dx[i] = dout[i] * s3 * (one - s3) * s2 * (one - s2) * s1 * (one - s1)
'''
