"""Calls a plain Python helper for the butterfly: only @cuda.jit(device=True) functions can be called."""

REPLACES = "warp_row_softmax_solution"
FAMILY = "compiler"
FAILS = {"check_warp_row_softmax": "Untyped global name 'butterfly_max'"}
SOURCE = '''
def butterfly_max(value):
    offset = WARP // 2
    while offset > 0:
        value = max(value, cuda.shfl_xor_sync(FULL_MASK, value, offset))
        offset //= 2
    return value


@cuda.jit
def warp_row_softmax(x, out):
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    cols = x.shape[1]

    m = float32(-math.inf)
    for j in range(lane, cols, WARP):
        m = max(m, x[row, j])
    m = butterfly_max(m)

    s = float32(0.0)
    for j in range(lane, cols, WARP):
        s += math.exp(x[row, j] - m)
    offset = WARP // 2
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2

    for j in range(lane, cols, WARP):
        out[row, j] = math.exp(x[row, j] - m) / s
'''
