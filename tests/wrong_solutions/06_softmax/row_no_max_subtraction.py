"""Skips the maximum: sums exp(x) directly, which overflows to inf in float32 on large logits."""

REPLACES = "row_softmax_solution"
FAMILY = "inputs"
FAILS = {"check_row_softmax": "produced NaN or infinity"}
SOURCE = '''
@cuda.jit
def row_softmax(x, out):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    scratch = cuda.shared.array(ROW_THREADS, float32)
    s = float32(0.0)
    for j in range(tid, cols, ROW_THREADS):
        s += math.exp(x[row, j])
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
        out[row, j] = math.exp(x[row, j]) / total
'''
