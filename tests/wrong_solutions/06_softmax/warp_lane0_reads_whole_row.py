"""Lane 0 reads the whole row for the maximum and the sum and shares them with one shuffle: serial work."""

REPLACES = "warp_row_softmax_solution"
FAMILY = "method"
FAILS = {"check_warp_row_softmax": "element accesses"}
SOURCE = '''
@cuda.jit
def warp_row_softmax(x, out):
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    cols = x.shape[1]

    m = float32(-math.inf)
    s = float32(0.0)
    if lane == 0:
        for j in range(cols):
            m = max(m, x[row, j])
        for j in range(cols):
            s += math.exp(x[row, j] - m)
    m = cuda.shfl_sync(FULL_MASK, m, 0)
    s = cuda.shfl_sync(FULL_MASK, s, 0)

    for j in range(lane, cols, WARP):
        out[row, j] = math.exp(x[row, j] - m) / s
'''
