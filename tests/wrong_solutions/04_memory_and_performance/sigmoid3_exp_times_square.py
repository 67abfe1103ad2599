"""Uses sigma'(x) = exp(-x) * sigma(x)**2 for the innermost sigmoid: for a very negative x that is
infinity times 0, which is NaN."""

FAMILY = "inputs"
REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'produced NaN'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    if i < x.size:
        e1 = math.exp(-x[i])
        s1 = float32(1.0) / (float32(1.0) + e1)
        s2 = float32(1.0) / (float32(1.0) + math.exp(-s1))
        s3 = float32(1.0) / (float32(1.0) + math.exp(-s2))
        dx[i] = dout[i] * s3 * (float32(1.0) - s3) * s2 * (float32(1.0) - s2) * e1 * s1 * s1
'''
