"""Lanes past the end of a read it anyway."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'OutOfBoundsError'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    value = a[i]
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    warp = i // 32
    if cuda.laneid == 0 and warp < sums.size:
        sums[warp] = value
'''
