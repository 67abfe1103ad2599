"""Loads only the block's own elements: the halo slots are read but never written."""

REPLACES = 'window_sum_solution'
FAILS = {'check_window_sum': 'UninitializedReadError'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def window_sum(a, out):
    tile = cuda.shared.array(TILE, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    tile[t + RADIUS] = a[i] if i < n else np.float32(0.0)
    cuda.syncthreads()
    if i < n:
        total = np.float32(0.0)
        for k in range(2 * RADIUS + 1):
            total += tile[t + k]
        out[i] = total
'''
