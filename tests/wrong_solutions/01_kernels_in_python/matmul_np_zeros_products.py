"""Allocates an array of products with np.zeros inside the kernel."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'rejects kernel `matmul`'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        products = np.zeros(a.shape[1], dtype=np.float32)
        for j in range(a.shape[1]):
            products[j] = a[row, j] * b[j, col]
        c[row, col] = products.sum()
'''
