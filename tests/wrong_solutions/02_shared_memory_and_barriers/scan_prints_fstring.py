"""Prints each step with an f-string: a kernel cannot build strings."""

REPLACES = 'block_scan_solution'
FAILS = {'check_block_scan': 'needs memory that a GPU kernel cannot allocate'}
FAMILY = 'compiler'
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
        addend = tile[t - offset] if t >= offset else 0.0
        cuda.syncthreads()
        tile[t] += addend
        cuda.syncthreads()
        if t == 0 and cuda.blockIdx.x == 0:
            print(f"offset {offset}: tile[0] = {tile[0]}")
        offset *= 2
    if i < a.size:
        out[i] = tile[t]
'''
