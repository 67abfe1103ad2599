"""Gives each thread a block of neighbouring columns (thread t takes columns t·w .. t·w + w - 1, w =
cdiv(cols, 64)) instead of every 64th: right values, but a warp reads 32 columns far apart, a sector each."""

REPLACES = 'row_softmax_solution'
FAMILY = 'method'
FAILS = {'check_row_softmax': 'sector transfers of global memory'}
SOURCE = '''
@cuda.jit
def row_softmax(x, out):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    scratch = cuda.shared.array(ROW_THREADS, float32)

    # 1. the row's maximum: each thread over its columns, then a tree in shared memory
    m = float32(-math.inf)
    width = (cols + ROW_THREADS - 1) // ROW_THREADS
    for j in range(tid * width, min(cols, tid * width + width)):
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
    s = float32(0.0)
    for j in range(tid * width, min(cols, tid * width + width)):
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
    for j in range(tid * width, min(cols, tid * width + width)):
        out[row, j] = math.exp(x[row, j] - m) / total
    ### END SOLUTION'''
