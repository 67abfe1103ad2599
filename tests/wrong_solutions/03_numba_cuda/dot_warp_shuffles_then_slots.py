"""Reduces each warp with shuffles, then the warps' sums through a few shared slots."""
REPLACES = "dot_solution"
FAMILY = "method"
FAILS = {"check_dot": "1 reads of shared memory"}
SOURCE = '''
@cuda.jit
def dot(a, b, out):
    partials = cuda.shared.array(0, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    value = a[i] * b[i] if i < a.size else np.float32(0.0)
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    if t % 32 == 0:
        partials[t // 32] = value
    cuda.syncthreads()
    if t == 0:
        total = np.float32(0.0)
        for w in range(cuda.blockDim.x // 32):
            total += partials[w]
        cuda.atomic.add(out, 0, total)
'''
