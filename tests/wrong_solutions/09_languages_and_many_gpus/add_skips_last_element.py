"""Masks with offsets < n - 1: the last element of every vector is never written."""

FAMILY = "index"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'still hold 12345.0 the check put there before the launch'}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n - 1
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + y, mask=mask)
'''
