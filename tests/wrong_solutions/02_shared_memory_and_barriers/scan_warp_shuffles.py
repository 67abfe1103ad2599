"""Scans the block with shfl_up: no shared memory, no barriers."""
REPLACES = "block_scan_solution"
FAMILY = "method"
FAILS = {"check_block_scan": "0 reads of shared memory"}
SOURCE = '''
@cuda.jit
def block_scan(a, out):
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    value = a[i] if i < a.size else np.float32(0.0)
    offset = 1
    while offset < THREADS:
        other = cuda.shfl_up_sync(0xFFFFFFFF, value, offset)
        if t >= offset:
            value += other
        offset *= 2
    if i < a.size:
        out[i] = value
'''
