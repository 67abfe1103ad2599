"""Thread (0, 0) computes all of c in a triple loop."""

REPLACES = 'matmul_solution'
FAILS = {'check_matmul': 'element accesses in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def matmul(a, b, c):
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.blockIdx.x == 0 and cuda.blockIdx.y == 0:
        for row in range(c.shape[0]):
            for col in range(c.shape[1]):
                total = float32(0.0)
                for j in range(a.shape[1]):
                    total += a[row, j] * b[j, col]
                c[row, col] = total
'''
