"""Each lane handles only column `lane`: rows longer than the warp are cut off (and the sum misses them)."""

REPLACES = "warp_row_softmax_solution"
FAMILY = "shapes"
FAILS = {"check_warp_row_softmax": "never written"}
SOURCE = '''
@cuda.jit
def warp_row_softmax(x, out):
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    cols = x.shape[1]
    m = float32(-math.inf)
    if lane < cols:
        m = x[row, lane]
    offset = WARP // 2
    while offset > 0:
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, offset))
        offset //= 2
    s = float32(0.0)
    if lane < cols:
        s = math.exp(x[row, lane] - m)
    offset = WARP // 2
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2
    if lane < cols:
        out[row, lane] = math.exp(x[row, lane] - m) / s
'''
