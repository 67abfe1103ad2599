"""The steps stop at offset 8 (offset < THREADS // 2): right while a block has at most 16 elements."""

REPLACES = 'block_scan_solution'
FAILS = {'check_block_scan': 'barrier steps in its busiest block; the task asks for at least 10'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def block_scan(a, out):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else np.float32(0.0)
    cuda.syncthreads()
    offset = 1
    while offset < THREADS // 2:
        addend = tile[t - offset] if t >= offset else np.float32(0.0)
        cuda.syncthreads()
        tile[t] += addend
        cuda.syncthreads()
        offset *= 2
    if i < a.size:
        out[i] = tile[t]
'''
