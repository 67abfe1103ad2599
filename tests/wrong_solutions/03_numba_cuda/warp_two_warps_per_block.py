"""Numbers the warps as blockIdx.x * 2 + threadIdx.x // 32: right only for blocks of 64 threads."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'never written'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    value = a[i] if i < a.size else np.float32(0.0)
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    warp = cuda.blockIdx.x * 2 + cuda.threadIdx.x // 32
    if cuda.laneid == 0 and warp < sums.size:
        sums[warp] = value
'''
