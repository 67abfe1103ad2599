"""One warp reads the row from global memory and reduces it; the other warp idles and the ring is never
used: no pipeline at all."""

REPLACES = 'ring_row_max_solution'
FAMILY = 'method'
FAILS = {'check_ring_row_max': 'threads that touched memory'}
SOURCE = '''
@cuda.jit
def ring_row_max(x, out):
    t = cuda.threadIdx.x
    row = cuda.blockIdx.x
    if t < WARP:  # one warp reads the row itself: no ring, no second warp
        m = float32(-math.inf)
        for j in range(t, x.shape[1], WARP):
            m = max(m, x[row, j])
        for offset in (16, 8, 4, 2, 1):
            m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))
        if t == 0:
            out[row] = m
'''
