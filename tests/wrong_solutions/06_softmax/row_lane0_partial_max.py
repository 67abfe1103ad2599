"""Takes thread 0's partial maximum (its own columns only) as the row's: the tree for the max is missing."""

REPLACES = "row_softmax_solution"
FAMILY = "inputs"
FAILS = {"check_row_softmax": "One thread's partial result taken for the row's skips a tree"}
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
    m = scratch[0]  # thread 0's partial maximum
    cuda.syncthreads()  # everybody has read the max before scratch is reused

    # 2. the row's sum of exp(x - m), the same way
    s = float32(0.0)
    for j in range(tid, cols, ROW_THREADS):
        s += math.exp(x[row, j] - m)
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
        out[row, j] = math.exp(x[row, j] - m) / total
'''
