"""A ring of one slot where the task asks for two: a correct protocol, but the producer can never fill
a tile while the consumer reads the other, which is what the second slot is for."""

FAMILY = 'method'
REPLACES = 'ring_row_max_solution'
FAILS = {'check_ring_row_max': 'bytes of static shared memory'}
SOURCE = '''
RING = 1
@cuda.jit
def ring_row_max(x, out):
    ring = cuda.shared.array((RING, WARP), float32)
    full = cuda.shared.array(RING, int32)  # producer lanes that filled slot s, in total
    empty = cuda.shared.array(RING, int32)  # consumer lanes that emptied it, in total
    t = cuda.threadIdx.x
    lane = t % WARP
    row = cuda.blockIdx.x
    length = x.shape[1]
    if t < RING:
        full[t] = 0
        empty[t] = 0
    cuda.syncthreads()
    tiles = (length + WARP - 1) // WARP
    if t < WARP:  # the producer
        for k in range(tiles):
            s = k % RING
            while cuda.atomic.add(empty, s, 0) < WARP * (k // RING):
                pass
            cuda.threadfence_block()
            j = k * WARP + lane
            ring[s, lane] = x[row, j] if j < length else float32(-math.inf)
            cuda.threadfence_block()
            cuda.atomic.add(full, s, 1)
    else:  # the consumer
        m = float32(-math.inf)
        for k in range(tiles):
            s = k % RING
            while cuda.atomic.add(full, s, 0) < WARP * (k // RING + 1):
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
