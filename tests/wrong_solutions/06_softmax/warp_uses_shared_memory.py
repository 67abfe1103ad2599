"""Reduces through shared memory and barriers, as in the block version: right values, but not the warp way."""

REPLACES = "warp_row_softmax_solution"
FAMILY = "method"
FAILS = {"check_warp_row_softmax": "reads of shared memory"}
SOURCE = '''
@cuda.jit
def warp_row_softmax(x, out):
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    cols = x.shape[1]
    scratch = cuda.shared.array(WARP, float32)
    m = float32(-math.inf)
    for j in range(lane, cols, WARP):
        m = max(m, x[row, j])
    scratch[lane] = m
    cuda.syncthreads()
    if lane == 0:
        for i in range(1, WARP):
            m = max(m, scratch[i])
        scratch[0] = m
    cuda.syncthreads()
    m = scratch[0]
    cuda.syncthreads()
    s = float32(0.0)
    for j in range(lane, cols, WARP):
        s += math.exp(x[row, j] - m)
    scratch[lane] = s
    cuda.syncthreads()
    if lane == 0:
        for i in range(1, WARP):
            s += scratch[i]
        scratch[0] = s
    cuda.syncthreads()
    s = scratch[0]
    for j in range(lane, cols, WARP):
        out[row, j] = math.exp(x[row, j] - m) / s
'''
