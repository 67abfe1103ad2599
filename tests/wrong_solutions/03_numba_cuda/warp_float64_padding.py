"""Pads the lanes past the end with np.float64(0.0): the value, and every shuffle and add of the tree, become
float64, which a GPU runs many times slower than the float32 the task asks for."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'computes in float64 where the task asks for float32'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    value = a[i] if i < a.size else np.float64(0.0)
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    warp = i // 32
    if cuda.laneid == 0 and warp < sums.size:
        sums[warp] = value
'''
