"""Computes the thread's index as blockIdx.x * 128 + threadIdx.x: right only while blocks have 128 threads."""

FAMILY = "shapes"
REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'sigmoid3_backward'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    i = cuda.blockIdx.x * 128 + cuda.threadIdx.x
    if i < x.size:
        s1 = 1.0 / (1.0 + math.exp(-x[i]))
        s2 = 1.0 / (1.0 + math.exp(-s1))
        s3 = 1.0 / (1.0 + math.exp(-s2))
        dx[i] = dout[i] * s3 * (1.0 - s3) * s2 * (1.0 - s2) * s1 * (1.0 - s1)
'''
