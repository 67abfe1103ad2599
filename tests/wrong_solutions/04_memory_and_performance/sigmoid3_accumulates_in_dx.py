"""Builds the product in dx in global memory: extra global reads and writes."""

FAMILY = "method"
REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'global'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    if i < x.size:
        s1 = float32(1.0) / (float32(1.0) + math.exp(-x[i]))
        s2 = float32(1.0) / (float32(1.0) + math.exp(-s1))
        s3 = float32(1.0) / (float32(1.0) + math.exp(-s2))
        dx[i] = dout[i] * s3 * (float32(1.0) - s3)
        dx[i] = dx[i] * s2 * (float32(1.0) - s2)
        dx[i] = dx[i] * s1 * (float32(1.0) - s1)
'''
