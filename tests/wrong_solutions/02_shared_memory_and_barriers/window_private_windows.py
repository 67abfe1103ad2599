"""Each thread copies its own 5 neighbours into its own part of shared memory: shared memory is used, but
every element is still read 5 times from global memory."""

REPLACES = 'window_sum_solution'
FAILS = {'check_window_sum': 'global reads'}
FAMILY = 'method'
SOURCE = '''
WINDOW_SLOTS = THREADS * (2 * RADIUS + 1)


@cuda.jit
def window_sum(a, out):
    windows = cuda.shared.array(WINDOW_SLOTS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    for k in range(2 * RADIUS + 1):
        j = i - RADIUS + k
        windows[5 * t + k] = a[j] if 0 <= j < n else np.float32(0.0)
    if i < n:
        total = np.float32(0.0)
        for k in range(2 * RADIUS + 1):
            total += windows[5 * t + k]
        out[i] = total
'''
