"""The new barrier is put inside `if t >= offset`, which thread 0 never enters."""

REPLACES = 'block_scan_solution'
FAILS = {'check_block_scan': 'BarrierError'}
FAMILY = 'sync'
SOURCE = '''
@cuda.jit
def block_scan(a, out):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    offset = 1
    while offset < THREADS:
        if t >= offset:
            addend = tile[t - offset]
            cuda.syncthreads()
            tile[t] += addend
        cuda.syncthreads()
        offset *= 2
    if i < a.size:
        out[i] = tile[t]
'''
