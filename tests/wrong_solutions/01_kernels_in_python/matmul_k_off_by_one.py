"""Inner loop stops one term early (range(k - 1))."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'wrong'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        total = float32(0.0)
        for j in range(a.shape[1] - 1):
            total += a[row, j] * b[j, col]
        c[row, col] = total
'''
