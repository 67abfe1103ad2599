"""A tile of n_cols lanes: its length is not known when the kernel is compiled."""

FAMILY = "compiler"
REPLACES = "softmax_kernel_solution"
FAILS = {'check_softmax_kernel': 'tl.constexpr'}
SOURCE = '''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, n_cols)
    x = tl.load(x_ptr + row * x_row_stride + cols)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0))
'''
