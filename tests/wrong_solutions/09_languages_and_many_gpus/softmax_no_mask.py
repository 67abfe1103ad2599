"""No mask: the padding lanes read past the end of each row."""

FAMILY = "shapes"
REPLACES = "softmax_kernel_solution"
FAILS = {'check_softmax_kernel': 'OutOfBoundsAccess'}
SOURCE = '''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_row_stride + cols)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)
'''
