"""Runs the scan's loop while offset <= THREADS: the sixth step, offset 32, adds nothing (no thread has a
neighbour 32 places to its left) but costs every block two more barriers."""

REPLACES = 'block_scan_solution'
FAILS = {'check_block_scan': 'barrier steps in its busiest block'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def block_scan(a, out):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    offset = 1
    while offset <= THREADS:
        addend = tile[t - offset] if t >= offset else np.float32(0.0)
        cuda.syncthreads()
        tile[t] += addend
        cuda.syncthreads()
        offset *= 2
    if i < a.size:
        out[i] = tile[t]
'''
