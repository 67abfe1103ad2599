"""Starts the running maximum at -1e30 instead of -inf: right for every row whose maximum lies above
-1e30, wrong for a row of values between -3e38 and -1e30."""

FAMILY = 'inputs'
REPLACES = 'ring_row_max_solution'
FAILS = {'check_ring_row_max': 'gives wrong results'}
SOURCE = '''
@cuda.jit
def ring_row_max(x, out):
    ring = cuda.shared.array((SLOTS, WARP), float32)
    full = cuda.shared.array(SLOTS, int32)  # producer lanes that filled slot s, in total
    empty = cuda.shared.array(SLOTS, int32)  # consumer lanes that emptied it, in total
    t = cuda.threadIdx.x
    lane = t % WARP
    row = cuda.blockIdx.x
    length = x.shape[1]
    if t < SLOTS:
        full[t] = 0
        empty[t] = 0
    cuda.syncthreads()
    tiles = (length + WARP - 1) // WARP
    if t < WARP:  # the producer
        for k in range(tiles):
            s = k % SLOTS
            while cuda.atomic.add(empty, s, 0) < WARP * (k // SLOTS):
                pass
            cuda.threadfence_block()
            j = k * WARP + lane
            ring[s, lane] = x[row, j] if j < length else float32(-math.inf)
            cuda.threadfence_block()
            cuda.atomic.add(full, s, 1)
    else:  # the consumer
        m = float32(-1e30)
        for k in range(tiles):
            s = k % SLOTS
            while cuda.atomic.add(full, s, 0) < WARP * (k // SLOTS + 1):
                pass
            cuda.threadfence_block()
            m = max(m, ring[s, lane])
            cuda.threadfence_block()
            cuda.atomic.add(empty, s, 1)
        for offset in (16, 8, 4, 2, 1):
            m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))
        if lane == 0:
            out[row] = m
'''
