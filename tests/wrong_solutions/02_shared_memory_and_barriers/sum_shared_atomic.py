"""Every thread adds its element into tile[0] with a shared atomic: right, but the 32 adds queue up one after
another."""

REPLACES = 'block_sum_solution'
FAILS = {'check_block_sum': 'atomic updates of shared memory'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(1, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t == 0:
        tile[0] = 0.0
    cuda.syncthreads()
    if i < a.size:
        cuda.atomic.add(tile, 0, a[i])
    cuda.syncthreads()
    if t == 0:
        partial[cuda.blockIdx.x] = tile[0]
'''
