"""No guard: edge threads index past the end of c."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'OutOfBoundsError'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    total = float32(0.0)
    for j in range(a.shape[1]):
        total += a[row, j] * b[j, col]
    c[row, col] = total
'''
