"""Reduces the block with warp shuffles: no shared memory, no barriers (blocks are one warp here)."""
REPLACES = "block_sum_solution"
FAMILY = "method"
FAILS = {"check_block_sum": "0 reads of shared memory"}
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    i = cuda.grid(1)
    value = a[i] if i < a.size else np.float32(0.0)
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x] = value
'''
