"""Zeroes each element of the input once it is in the tile, "so that a second launch cannot count it twice":
the sums are right, but the caller's array comes back as zeros. The check's inputs are read-only, as a
caller's are (and Numba refuses to compile a write into a read-only array)."""

REPLACES = 'block_sum_solution'
FAMILY = 'memory'
FAILS = {'check_block_sum': 'read-only NumPy array'}
SOURCE = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        tile[t] = a[i]
        a[i] = np.float32(0.0)
    else:
        tile[t] = np.float32(0.0)
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            tile[t] += tile[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = tile[0]
'''
