"""Reads the whole window from global memory: right values, five reads per element."""

REPLACES = 'window_sum_solution'
FAILS = {'check_window_sum': 'Reading the neighbours from global memory skips the tile'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def window_sum(a, out):
    i = cuda.grid(1)
    if i < a.size:
        total = np.float32(0.0)
        for k in range(-RADIUS, RADIUS + 1):
            if 0 <= i + k < a.size:
                total += a[i + k]
        out[i] = total
'''
