"""Caches its columns in a local array of 16, so rows of more than 16 x 64 = 1024 columns overflow it."""

REPLACES = "row_softmax_solution"
FAMILY = "shapes"
FAILS = {"check_row_softmax": "OutOfBoundsError"}
SOURCE = '''
@cuda.jit
def row_softmax(x, out):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    scratch = cuda.shared.array(ROW_THREADS, float32)

    # 1. the row's maximum: each thread over its columns, then a tree in shared memory
    cache = cuda.local.array(16, float32)  # up to 16 columns per thread
    m = float32(-math.inf)
    count = 0
    for j in range(tid, cols, ROW_THREADS):
        cache[count] = x[row, j]
        m = max(m, cache[count])
        count += 1
    scratch[tid] = m
    cuda.syncthreads()
    stride = ROW_THREADS // 2
    while stride > 0:
        if tid < stride:
            scratch[tid] = max(scratch[tid], scratch[tid + stride])
        cuda.syncthreads()
        stride //= 2
    m = scratch[0]
    cuda.syncthreads()  # everybody has read the max before scratch is reused

    # 2. the row's sum of exp(x - m), the same way
    s = float32(0.0)
    for i in range(count):
        s += math.exp(cache[i] - m)
    scratch[tid] = s
    cuda.syncthreads()
    stride = ROW_THREADS // 2
    while stride > 0:
        if tid < stride:
            scratch[tid] += scratch[tid + stride]
        cuda.syncthreads()
        stride //= 2
    total = scratch[0]

    # 3. the output
    for i in range(count):
        out[row, tid + i * ROW_THREADS] = math.exp(cache[i] - m) / total
'''
