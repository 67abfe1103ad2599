"""The tile is np.int32 (copied from a counting kernel): right only for whole-number inputs."""

REPLACES = 'block_scan_solution'
FAILS = {'check_block_scan': 'wrong'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def block_scan(a, out):
    tile = cuda.shared.array(THREADS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    offset = 1
    while offset < THREADS:
        addend = tile[t - offset] if t >= offset else 0
        cuda.syncthreads()
        tile[t] += addend
        cuda.syncthreads()
        offset *= 2
    if i < a.size:
        out[i] = tile[t]
'''
