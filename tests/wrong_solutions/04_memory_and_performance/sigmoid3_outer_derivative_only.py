"""Forgets the chain rule: multiplies by the outer sigmoid's derivative only."""

FAMILY = "index"
REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'wrong'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    if i < x.size:
        s1 = float32(1.0) / (float32(1.0) + math.exp(-x[i]))
        s2 = float32(1.0) / (float32(1.0) + math.exp(-s1))
        s3 = float32(1.0) / (float32(1.0) + math.exp(-s2))
        dx[i] = dout[i] * s3 * (float32(1.0) - s3)
'''
