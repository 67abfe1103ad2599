"""The right halo goes to tile[t + THREADS] (RADIUS forgotten): it lands on slots the last threads fill with
their own elements."""

REPLACES = 'window_sum_solution'
FAILS = {'check_window_sum': 'two threads store into the same slot'}
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
        right = i + THREADS
        tile[t + THREADS] = a[right] if right < n else np.float32(0.0)
    cuda.syncthreads()
    if i < n:
        total = np.float32(0.0)
        for k in range(2 * RADIUS + 1):
            total += tile[t + k]
        out[i] = total
'''
