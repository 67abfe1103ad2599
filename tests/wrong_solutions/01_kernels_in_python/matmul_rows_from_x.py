"""Row from the x indices: the grid no longer covers c when n > 16."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'never written'}
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < c.shape[0] and col < c.shape[1]:
        total = 0.0
        for j in range(a.shape[1]):
            total += a[row, j] * b[j, col]
        c[row, col] = total
'''
