"""Returns the warp's sum from lane 0 instead of storing it."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'A kernel cannot return a value'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    value = a[i] if i < a.size else np.float32(0.0)
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    if cuda.laneid == 0 and i // 32 < sums.size:
        sums[i // 32] = value
        return value
'''
