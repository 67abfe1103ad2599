"""The inner loop runs to the number of rows of c (M) instead of the shared dimension K."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'wrong'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        total = float32(0.0)
        for j in range(c.shape[0]):
            total += a[row, j] * b[j, col]
        c[row, col] = total
'''
