"""Thread t adds up tile[0..t] itself: no race and right values, but O(n²) work and a span of 32 reads."""

REPLACES = 'block_scan_solution'
FAILS = {'check_block_scan': 'in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def block_scan(a, out):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else np.float32(0.0)
    cuda.syncthreads()
    total = np.float32(0.0)
    for j in range(t + 1):
        total += tile[j]
    if i < a.size:
        out[i] = total
'''
