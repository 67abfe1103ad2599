"""Copies the row into a shared array of 1024 floats first: rows longer than 1024 columns overflow it."""

REPLACES = "row_softmax_solution"
FAMILY = "shapes"
FAILS = {"check_row_softmax": "bytes of static shared memory per block; the budget is 256"}
SOURCE = '''
@cuda.jit
def row_softmax(x, out):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    scratch = cuda.shared.array(ROW_THREADS, float32)
    cached = cuda.shared.array(1024, float32)  # the whole row, read once
    for j in range(tid, cols, ROW_THREADS):
        cached[j] = x[row, j]
    cuda.syncthreads()

    # 1. the row's maximum: each thread over its columns, then a tree in shared memory
    m = float32(-math.inf)
    for j in range(tid, cols, ROW_THREADS):
        m = max(m, cached[j])
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
    for j in range(tid, cols, ROW_THREADS):
        s += math.exp(cached[j] - m)
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
    for j in range(tid, cols, ROW_THREADS):
        out[row, j] = math.exp(cached[j] - m) / total
'''
