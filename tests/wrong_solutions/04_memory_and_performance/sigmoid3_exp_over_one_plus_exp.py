"""Computes the first sigmoid as exp(x) / (1 + exp(x)): the same function on paper, but for a large positive x
both exp(x) and 1 + exp(x) are infinite and their quotient is NaN."""

FAMILY = "inputs"
REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'produced NaN'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    if i < x.size:
        e = math.exp(x[i])
        s1 = e / (float32(1.0) + e)
        s2 = float32(1.0) / (float32(1.0) + math.exp(-s1))
        s3 = float32(1.0) / (float32(1.0) + math.exp(-s2))
        dx[i] = dout[i] * s3 * (float32(1.0) - s3) * s2 * (float32(1.0) - s2) * s1 * (float32(1.0) - s1)
'''
