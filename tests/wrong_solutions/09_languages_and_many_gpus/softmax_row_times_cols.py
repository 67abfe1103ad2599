"""Finds row r at r * n_cols, as if x were contiguous: x is a slice of a wider matrix."""

FAMILY = "shapes"
REPLACES = "softmax_kernel_solution"
FAILS = {'check_softmax_kernel': 'OutOfBoundsAccess'}
SOURCE = '''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)
'''
