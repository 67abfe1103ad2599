"""Thread 0 scans the tile in one loop, the others wait: right values, no parallel steps."""

REPLACES = 'block_scan_solution'
FAILS = {'check_block_scan': 'in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def block_scan(a, out):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    if t == 0:
        for j in range(1, THREADS):
            tile[j] += tile[j - 1]
    cuda.syncthreads()
    if i < a.size:
        out[i] = tile[t]
'''
