"""Calls np.dot on a row of a and a column of b inside the kernel."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'rejects kernel `matmul`'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = np.dot(a[row, :], b[:, col])
'''
