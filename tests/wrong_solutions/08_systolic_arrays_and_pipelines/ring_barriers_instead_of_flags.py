"""Both warps run the same loop and hand each tile over with two barriers instead of flags: right, but not
a pipeline."""

REPLACES = 'ring_row_max_solution'
FAMILY = 'method'
FAILS = {'check_ring_row_max': 'barrier steps in its busiest block'}
SOURCE = '''
@cuda.jit
def ring_row_max(x, out):
    ring = cuda.shared.array((SLOTS, WARP), float32)
    t = cuda.threadIdx.x
    lane = t % WARP
    row = cuda.blockIdx.x
    length = x.shape[1]
    m = float32(-math.inf)
    for k in range((length + WARP - 1) // WARP):  # every thread runs the loop: barriers instead of flags
        s = k % SLOTS
        j = k * WARP + lane
        if t < WARP:
            ring[s, lane] = x[row, j] if j < length else float32(-math.inf)
        cuda.syncthreads()
        if t >= WARP:
            m = max(m, ring[s, lane])
        cuda.syncthreads()
    if t >= WARP:
        for offset in (16, 8, 4, 2, 1):
            m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))
        if lane == 0:
            out[row] = m
'''
