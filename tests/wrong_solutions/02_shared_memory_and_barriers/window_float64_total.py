"""Starts the window's sum at a bare 0.0, a float64 in Numba: every add of the window runs in float64, which a
GPU runs many times slower than the float32 the task asks for."""

REPLACES = 'window_sum_solution'
FAILS = {'check_window_sum': 'computes in float64 where the task asks for float32'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def window_sum(a, out):
    tile = cuda.shared.array(TILE, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    tile[t + RADIUS] = a[i] if i < n else 0.0
    if t < RADIUS:
        left = i - RADIUS
        tile[t] = a[left] if left >= 0 else 0.0
        right = i + THREADS
        tile[t + RADIUS + THREADS] = a[right] if right < n else 0.0
    cuda.syncthreads()
    if i < n:
        total = 0.0
        for k in range(2 * RADIUS + 1):
            total += tile[t + k]
        out[i] = total
'''
