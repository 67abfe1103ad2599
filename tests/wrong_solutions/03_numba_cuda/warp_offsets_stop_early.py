"""The shuffle loop stops before offset 1: lane 0 misses half of the values."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'in its busiest thread; the task asks for at least 5'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    value = a[i] if i < a.size else np.float32(0.0)
    offset = 16
    while offset > 1:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    warp = i // 32
    if cuda.laneid == 0 and warp < sums.size:
        sums[warp] = value
'''
