"""Writes each sigmoid's derivative as exp(-z) / (1 + exp(-z))**2: right for moderate x, but for a very
negative x, exp(-x) overflows to infinity and inf / inf is NaN (on a GPU in float32 already below x =
-88.7)."""

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
        e2 = math.exp(-s1)
        s2 = float32(1.0) / (float32(1.0) + e2)
        e3 = math.exp(-s2)
        d1 = e1 / ((float32(1.0) + e1) * (float32(1.0) + e1))
        d2 = e2 / ((float32(1.0) + e2) * (float32(1.0) + e2))
        d3 = e3 / ((float32(1.0) + e3) * (float32(1.0) + e3))
        dx[i] = dout[i] * d3 * d2 * d1
'''
