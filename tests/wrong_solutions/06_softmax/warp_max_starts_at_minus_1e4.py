"""Starts each lane's maximum at -1e4 instead of -inf: right while some value of the row lies above -1e4,
NaN on rows whose every value lies below it."""

REPLACES = 'warp_row_softmax_solution'
FAMILY = 'inputs'
FAILS = {'check_warp_row_softmax': 'produced NaN'}
SOURCE = '''
@cuda.jit
def warp_row_softmax(x, out):
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    cols = x.shape[1]

    m = float32(-1e4)
    for j in range(lane, cols, WARP):
        m = max(m, x[row, j])
    offset = WARP // 2
    while offset > 0:  # butterfly: after 5 steps every lane holds the maximum of all 32
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, offset))
        offset //= 2

    s = float32(0.0)
    for j in range(lane, cols, WARP):
        s += math.exp(x[row, j] - m)
    offset = WARP // 2
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2

    for j in range(lane, cols, WARP):
        out[row, j] = math.exp(x[row, j] - m) / s
    ### END SOLUTION'''
