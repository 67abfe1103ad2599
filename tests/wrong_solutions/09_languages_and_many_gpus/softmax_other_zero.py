"""Padding lanes load 0 instead of -inf: on rows of very negative logits the padding wins the max and its
exp(0) fills the sum."""

FAMILY = "inputs"
REPLACES = "softmax_kernel_solution"
FAILS = {'check_softmax_kernel': 'are wrong'}
SOURCE = '''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)
'''
