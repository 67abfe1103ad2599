"""Loads the x tile twice (once for a check that is never used): twice the reads."""

FAMILY = "method"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'tl.load calls in one program'}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    biggest = tl.max(tl.abs(tl.load(x_ptr + offsets, mask=mask, other=0.0)), axis=0)
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + y + 0.0 * biggest, mask=mask)
'''
