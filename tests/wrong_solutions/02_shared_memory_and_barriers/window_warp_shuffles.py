"""Window sum with warp shuffles: each lane's own element and a 4-value halo per block travel by shuffles."""
REPLACES = "window_sum_solution"
FAMILY = "method"
FAILS = {"check_window_sum": "0 reads of shared memory"}
SOURCE = '''
@cuda.jit
def window_sum(a, out):
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    n = a.size
    start = cuda.blockIdx.x * THREADS
    mine = a[i] if i < n else np.float32(0.0)
    halo = np.float32(0.0)  # lanes 0..1: a[start-2], a[start-1]; lanes 2..3: a[start+32], a[start+33]
    if t < 2 * RADIUS:
        j = start - RADIUS + t if t < RADIUS else start + THREADS + t - RADIUS
        if 0 <= j < n:
            halo = a[j]
    total = mine
    for d in range(1, RADIUS + 1):
        left = cuda.shfl_up_sync(0xFFFFFFFF, mine, d)
        right = cuda.shfl_down_sync(0xFFFFFFFF, mine, d)
        left_halo = cuda.shfl_sync(0xFFFFFFFF, halo, (RADIUS + t - d) % 32)
        right_halo = cuda.shfl_sync(0xFFFFFFFF, halo, (RADIUS + t + d - THREADS) % 32)
        total += left if t >= d else left_halo
        total += right if t + d < THREADS else right_halo
    if i < n:
        out[i] = total
'''
