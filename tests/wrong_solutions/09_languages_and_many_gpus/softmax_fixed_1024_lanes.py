"""Ignores BLOCK and always uses 1024 lanes: right for rows of up to 1024 columns only."""
REPLACES = "softmax_kernel_solution"
FAMILY = "shapes"
FAILS = {"check_softmax_kernel": "cols=1100"}
SOURCE = '''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, 1024)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)
'''
