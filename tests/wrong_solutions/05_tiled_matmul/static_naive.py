"""A naive matmul: correct, but with no shared memory at all it reads every input element N times."""

FAMILY = "method"
REPLACES = 'tiled_matmul_solution'
FAILS = {'check_tiled_matmul': 'static shared memory'}
SOURCE = '''
@cuda.jit
def tiled_matmul(a, b, c):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        acc = float32(0.0)
        for j in range(a.shape[1]):
            acc += a[row, j] * b[j, col]
        c[row, col] = acc
'''
