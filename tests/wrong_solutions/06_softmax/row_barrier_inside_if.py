"""Puts the barrier inside `if tid < stride`: the other threads skip it (a barrier error or a race)."""

REPLACES = "row_softmax_solution"
FAMILY = "sync"
FAILS = {"check_row_softmax": "gpusim stopped the kernel"}
SOURCE = '''
@cuda.jit
def row_softmax(x, out):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    scratch = cuda.shared.array(ROW_THREADS, float32)
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
    cuda.syncthreads()
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
    for j in range(tid, cols, ROW_THREADS):
        out[row, j] = math.exp(x[row, j] - m) / total
'''
