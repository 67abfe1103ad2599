"""Writes the sigmoids with bare 1.0 literals, float64s in Numba: the whole chain runs in float64, which a GPU
runs many times slower than the float32 the task asks for."""

REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'computes in float64 where the task asks for float32'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.grid(1)
    if i < x.size:
        s1 = 1.0 / (1.0 + math.exp(-x[i]))
        s2 = 1.0 / (1.0 + math.exp(-s1))
        s3 = 1.0 / (1.0 + math.exp(-s2))
        dx[i] = dout[i] * s3 * (1.0 - s3) * s2 * (1.0 - s2) * s1 * (1.0 - s1)
'''
