"""Reads the addend into a variable but writes without a barrier in between: still a race."""

REPLACES = 'block_scan_solution'
FAILS = {'check_block_scan': 'RaceError'}
FAMILY = 'sync'
SOURCE = '''
@cuda.jit
def block_scan(a, out):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else np.float32(0.0)
    cuda.syncthreads()
    offset = 1
    while offset < THREADS:
        addend = tile[t - offset] if t >= offset else np.float32(0.0)
        tile[t] += addend
        cuda.syncthreads()
        offset *= 2
    if i < a.size:
        out[i] = tile[t]
'''
