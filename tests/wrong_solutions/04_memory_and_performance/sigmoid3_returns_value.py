"""Returns the gradient instead of writing it: a kernel cannot return a value, and the compiler refuses it."""

FAMILY = "compiler"
REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'CUDA compiler'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    if i < x.size:
        s1 = 1.0 / (1.0 + math.exp(-x[i]))
        s2 = 1.0 / (1.0 + math.exp(-s1))
        s3 = 1.0 / (1.0 + math.exp(-s2))
        dx[i] = dout[i] * s3 * (1.0 - s3) * s2 * (1.0 - s2) * s1 * (1.0 - s1)
        return dx[i]
'''
