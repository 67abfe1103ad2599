"""Masks the store but not the loads: the right values, read from past the end."""

FAMILY = "shapes"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'read x['}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, alpha * x + y, mask=offsets < n)
'''
