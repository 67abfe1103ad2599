"""Zeroes c[row, col] and then adds into it in the loop: k reads and k writes of c per element."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'global reads'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = 0.0
        for j in range(a.shape[1]):
            c[row, col] += a[row, j] * b[j, col]
'''
