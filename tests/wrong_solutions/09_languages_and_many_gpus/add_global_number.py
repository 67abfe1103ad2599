"""Reads a module-level float that is not a tl.constexpr."""

FAMILY = "compiler"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'only if it is a tl.constexpr'}
SOURCE = '''
ONE = 1.0


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + ONE * tl.load(y_ptr + offsets, mask=mask), mask=mask)
'''
