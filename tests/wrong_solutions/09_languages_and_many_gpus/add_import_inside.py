"""Imports inside the kernel."""

FAMILY = "compiler"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'cannot import'}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    import math
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + tl.load(y_ptr + offsets, mask=mask), mask=mask)
'''
