"""Thread 0 copies the whole tile and both halos alone, then everyone reads: right values and reads, one busy
thread."""

REPLACES = 'window_sum_solution'
FAILS = {'check_window_sum': 'in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def window_sum(a, out):
    tile = cuda.shared.array(TILE, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    if t == 0:
        start = cuda.blockIdx.x * THREADS - RADIUS
        for k in range(TILE):
            j = start + k
            tile[k] = a[j] if 0 <= j < n else np.float32(0.0)
    cuda.syncthreads()
    if i < n:
        total = np.float32(0.0)
        for k in range(2 * RADIUS + 1):
            total += tile[t + k]
        out[i] = total
'''
