"""Right sums, but through a shared-memory tree instead of shuffles."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'instead of shared memory'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    tile = cuda.shared.array(1024, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    lane = t % 32
    stride = 16
    while stride > 0:
        if lane < stride:
            tile[t] += tile[t + stride]
        cuda.syncthreads()
        stride //= 2
    warp = i // 32
    if lane == 0 and warp < sums.size:
        sums[warp] = tile[t]
'''
