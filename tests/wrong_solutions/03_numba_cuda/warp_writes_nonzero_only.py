"""Lane 0 writes its warp's sum only when it is nonzero, assuming sums starts at 0: warps of zeros are never
written."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'never written'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    value = a[i] if i < a.size else np.float32(0.0)
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    warp = i // 32
    if cuda.laneid == 0 and warp < sums.size and value != 0.0:
        sums[warp] = value
'''
