"""Reduces the sums in a second shared array instead of reusing the slots of the maximum: right values, twice
the shared memory the method needs (512 bytes a block where 256 do)."""

REPLACES = 'row_softmax_solution'
FAMILY = 'memory'
FAILS = {'check_row_softmax': 'bytes of static shared memory per block; the budget is 256'}
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
    stride = ROW_THREADS // 2
    while stride > 0:
        if tid < stride:
            scratch[tid] = max(scratch[tid], scratch[tid + stride])
        cuda.syncthreads()
        stride //= 2
    m = scratch[0]
    cuda.syncthreads()  # everybody has read the max before scratch is reused

    # 2. the row's sum of exp(x - m), the same way
    sums = cuda.shared.array(ROW_THREADS, float32)
    s = float32(0.0)
    for j in range(tid, cols, ROW_THREADS):
        s += math.exp(x[row, j] - m)
    sums[tid] = s
    cuda.syncthreads()
    stride = ROW_THREADS // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    total = sums[0]

    # 3. the output
    for j in range(tid, cols, ROW_THREADS):
        out[row, j] = math.exp(x[row, j] - m) / total
    ### END SOLUTION'''
