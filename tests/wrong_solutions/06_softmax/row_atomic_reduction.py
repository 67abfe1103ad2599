"""Combines the partial results with atomics on one shared slot instead of a tree reduction."""

REPLACES = "row_softmax_solution"
FAMILY = "method"
FAILS = {"check_row_softmax": "atomic"}
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
    if tid == 0:
        scratch[0] = float32(-math.inf)
        scratch[1] = float32(0.0)
    cuda.syncthreads()
    cuda.atomic.max(scratch, 0, m)
    cuda.syncthreads()
    m = scratch[0]
    cuda.syncthreads()  # everybody has read the max before scratch is reused

    # 2. the row's sum of exp(x - m), the same way
    s = float32(0.0)
    for j in range(tid, cols, ROW_THREADS):
        s += math.exp(x[row, j] - m)
    cuda.atomic.add(scratch, 1, s)
    cuda.syncthreads()
    total = scratch[1]

    # 3. the output
    for j in range(tid, cols, ROW_THREADS):
        out[row, j] = math.exp(x[row, j] - m) / total
'''
