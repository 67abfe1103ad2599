"""Writes c only where the sum is nonzero, assuming c starts at 0: zero rows of a leave c unwritten."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'never written'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        total = float32(0.0)
        for j in range(a.shape[1]):
            total += a[row, j] * b[j, col]
        if total != 0.0:
            c[row, col] = total
'''
