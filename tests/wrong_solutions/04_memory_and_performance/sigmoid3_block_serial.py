"""Thread 0 of each block computes all of its block's elements in a loop: right values and 2 reads per
element, but one thread per block does the work of 128."""

FAMILY = "method"
REPLACES = 'sigmoid3_backward_solution'
FAILS = {'check_sigmoid3_backward': 'threads that touched memory'}
SOURCE = '''
@cuda.jit
def sigmoid3_backward(x, dout, dx):
    if cuda.threadIdx.x == 0:
        start = cuda.blockIdx.x * cuda.blockDim.x
        for i in range(start, min(start + cuda.blockDim.x, x.size)):
            s1 = float32(1.0) / (float32(1.0) + math.exp(-x[i]))
            s2 = float32(1.0) / (float32(1.0) + math.exp(-s1))
            s3 = float32(1.0) / (float32(1.0) + math.exp(-s2))
            dx[i] = dout[i] * s3 * (float32(1.0) - s3) * s2 * (float32(1.0) - s2) * s1 * (float32(1.0) - s1)
'''
