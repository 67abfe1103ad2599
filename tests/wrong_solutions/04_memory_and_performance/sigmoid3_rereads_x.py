"""Reads x[i] from global memory once per sigmoid instead of once: over the read budget."""

FAMILY = "method"
REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'global reads'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    if i < x.size:
        s1 = 1.0 / (1.0 + math.exp(-x[i]))
        s2 = 1.0 / (1.0 + math.exp(-1.0 / (1.0 + math.exp(-x[i]))))
        s3 = 1.0 / (1.0 + math.exp(-1.0 / (1.0 + math.exp(-1.0 / (1.0 + math.exp(-x[i]))))))
        dx[i] = dout[i] * s3 * (1.0 - s3) * s2 * (1.0 - s2) * s1 * (1.0 - s1)
'''
