"""No mask at all: the last tile reads and writes past the end of the vectors."""

FAMILY = "shapes"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'OutOfBoundsAccess'}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, alpha * tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
'''
