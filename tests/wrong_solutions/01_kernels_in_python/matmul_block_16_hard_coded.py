"""Hard-codes 16 for the block size in the index: right only for 16 x 16 blocks."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'never written'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * 16 + cuda.threadIdx.y
    col = cuda.blockIdx.x * 16 + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        total = float32(0.0)
        for j in range(a.shape[1]):
            total += a[row, j] * b[j, col]
        c[row, col] = total
'''
