"""Collects the two tiles in a Python list: fine for the interpreter, not for the compiler."""

FAMILY = "compiler"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'no Python lists'}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tiles = []
    tiles.append(tl.load(x_ptr + offsets, mask=mask))
    tiles.append(tl.load(y_ptr + offsets, mask=mask))
    tl.store(out_ptr + offsets, alpha * tiles[0] + tiles[1], mask=mask)
'''
