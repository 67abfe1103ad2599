"""The right halo is fetched one element too far (a[i + THREADS + 1])."""

REPLACES = 'window_sum_solution'
FAILS = {'check_window_sum': 'wrong'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def window_sum(a, out):
    tile = cuda.shared.array(TILE, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    tile[t + RADIUS] = a[i] if i < n else np.float32(0.0)
    if t < RADIUS:
        left = i - RADIUS
        tile[t] = a[left] if left >= 0 else np.float32(0.0)
        right = i + THREADS + 1
        tile[t + RADIUS + THREADS] = a[right] if right < n else np.float32(0.0)
    cuda.syncthreads()
    if i < n:
        total = np.float32(0.0)
        for k in range(2 * RADIUS + 1):
            total += tile[t + k]
        out[i] = total
'''
