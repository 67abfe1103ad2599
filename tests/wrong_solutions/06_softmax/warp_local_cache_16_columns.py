"""Keeps each lane's columns in a local array of 16: rows of more than 16 x 32 = 512 columns overflow it."""

REPLACES = "warp_row_softmax_solution"
FAMILY = "shapes"
FAILS = {"check_warp_row_softmax": "OutOfBoundsError"}
SOURCE = '''
@cuda.jit
def warp_row_softmax(x, out):
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    cols = x.shape[1]

    cache = cuda.local.array(16, float32)  # up to 16 columns per lane
    m = float32(-math.inf)
    count = 0
    for j in range(lane, cols, WARP):
        cache[count] = x[row, j]
        m = max(m, cache[count])
        count += 1
    offset = WARP // 2
    while offset > 0:  # butterfly: after 5 steps every lane holds the maximum of all 32
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, offset))
        offset //= 2

    s = float32(0.0)
    for i in range(count):
        s += math.exp(cache[i] - m)
    offset = WARP // 2
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2

    for i in range(count):
        out[row, lane + i * WARP] = math.exp(cache[i] - m) / s
'''
