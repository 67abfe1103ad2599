"""Imports a module inside the kernel."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'A kernel cannot import anything'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    import math
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        total = float32(0.0)
        for j in range(a.shape[1]):
            total += a[row, j] * b[j, col]
        c[row, col] = math.fabs(total) if total > 0 else total
'''
