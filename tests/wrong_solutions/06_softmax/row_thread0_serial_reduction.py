"""Thread 0 combines the 64 partial results in a loop (twice) instead of a tree: right values, serial."""

REPLACES = "row_softmax_solution"
FAMILY = "method"
FAILS = {"check_row_softmax": "element accesses"}
SOURCE = '''
@cuda.jit
def row_softmax(x, out):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    scratch = cuda.shared.array(ROW_THREADS, float32)

    # 1. the row's maximum: each thread over its columns, then a tree in shared memory
    m = float32(-math.inf)
    for j in range(tid, cols, ROW_THREADS):
        m = max(m, x[row, j])
    scratch[tid] = m
    cuda.syncthreads()
    if tid == 0:
        for i in range(1, ROW_THREADS):
            scratch[0] = max(scratch[0], scratch[i])
    cuda.syncthreads()
    m = scratch[0]
    cuda.syncthreads()  # everybody has read the max before scratch is reused

    # 2. the row's sum of exp(x - m), the same way
    s = float32(0.0)
    for j in range(tid, cols, ROW_THREADS):
        s += math.exp(x[row, j] - m)
    scratch[tid] = s
    cuda.syncthreads()
    if tid == 0:
        for i in range(1, ROW_THREADS):
            scratch[0] += scratch[i]
    cuda.syncthreads()
    total = scratch[0]

    # 3. the output
    for j in range(tid, cols, ROW_THREADS):
        out[row, j] = math.exp(x[row, j] - m) / total
'''
