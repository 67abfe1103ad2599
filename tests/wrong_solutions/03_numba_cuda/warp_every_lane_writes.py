"""Every lane writes sums[i // 32], not only lane 0."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'only lane 0 of each warp writes'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    value = a[i] if i < a.size else np.float32(0.0)
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    if i // 32 < sums.size:
        sums[i // 32] = value
'''
