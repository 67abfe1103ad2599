"""Rows from the x indices and columns from y: where the grid covers c the values are right, but the lanes of
a warp read a column of a (uncoalesced)."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'sector transfers of global memory'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < c.shape[0] and col < c.shape[1]:
        total = float32(0.0)
        for j in range(a.shape[1]):
            total += a[row, j] * b[j, col]
        c[row, col] = total
'''
