"""Every program runs 128 lanes and switches off those past BLOCK: right for BLOCK = 64 and 128, the
values the lesson launches with, and half of every tile left unwritten for BLOCK = 256 or more."""

FAMILY = "shapes"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'block=256'}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    lanes = tl.arange(0, 128)
    offsets = pid * BLOCK + lanes
    mask = (offsets < n) & (lanes < BLOCK)
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + y, mask=mask)
'''
