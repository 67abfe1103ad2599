"""Padding lanes load -1e4 instead of -inf ("a large negative number"): right on every row whose logits lie
above -1e4, wrong on a row whose logits all lie below it, where the padding wins the max."""

FAMILY = "inputs"
REPLACES = "softmax_kernel_solution"
FAILS = {'check_softmax_kernel': 'inputs=deep'}
SOURCE = '''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-1e4)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)
'''
