"""Saves the first sigmoid over its input x "to reuse the memory": the gradient is right, but x belongs to
the caller, whose next pass would read sigmoids instead of inputs."""

REPLACES = 'sigmoid3_backward_solution'
FAMILY = 'memory'
FAILS = {'check_sigmoid3_backward': 'read-only NumPy array'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    if i < x.size:
        one = float32(1.0)
        x[i] = one / (one + math.exp(-x[i]))
        s1 = x[i]
        s2 = one / (one + math.exp(-s1))
        s3 = one / (one + math.exp(-s2))
        dx[i] = dout[i] * s3 * (one - s3) * s2 * (one - s2) * s1 * (one - s1)
'''
