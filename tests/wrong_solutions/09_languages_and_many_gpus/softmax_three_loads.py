"""Three passes over memory (max, sum, output), each loading the row again: not fused."""

FAMILY = "method"
REPLACES = "softmax_kernel_solution"
FAILS = {'check_softmax_kernel': 'element loads from x'}
SOURCE = '''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    m = tl.max(tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")), axis=0)
    again = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    total = tl.sum(tl.exp(again - m), axis=0)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    tl.store(out_ptr + row * out_row_stride + cols, tl.exp(x - m) / total, mask=mask)
'''
