"""Sums in float64 (`total = 0.0`, a float64 literal): always within tolerance, and 2 to 64 times slower on a
GPU than the float32 the task asks for."""

FAMILY = 'method'
REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'add.f64 at 01_kernels_in_python cell 13, line 9 (`total += a[row, j] * b[j, col]`)'}
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        total = 0.0
        for j in range(a.shape[1]):
            total += a[row, j] * b[j, col]
        c[row, col] = total
'''
