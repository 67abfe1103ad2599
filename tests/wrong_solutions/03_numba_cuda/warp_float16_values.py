"""Shuffles float16 values to halve the register traffic: warp shuffles move 32- and 64-bit values only."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'shfl_sync only supports 32- and 64-bit'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    value = np.float16(a[i]) if i < a.size else np.float16(0.0)
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    warp = i // 32
    if cuda.laneid == 0 and warp < sums.size:
        sums[warp] = value
'''
