"""Copies the row of a into a local array of 64 floats first: fine while k <= 64."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'a_row[64]'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        a_row = cuda.local.array(64, np.float32)
        for j in range(a.shape[1]):
            a_row[j] = a[row, j]
        total = float32(0.0)
        for j in range(a.shape[1]):
            total += a_row[j] * b[j, col]
        c[row, col] = total
'''
