"""Tiles placed 64 apart whatever BLOCK is: with BLOCK = 128 they overlap, and for long vectors the end is
never reached."""

FAMILY = "shapes"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'element stores to out'}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * 64 + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + tl.load(y_ptr + offsets, mask=mask), mask=mask)
'''
