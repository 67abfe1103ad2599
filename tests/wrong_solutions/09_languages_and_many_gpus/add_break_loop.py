"""Stops an element loop with `break` at the end of the vector: the interpreter runs it, Triton's compiler
has no `break`."""

FAMILY = "compiler"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'cannot `break`'}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + tl.load(y_ptr + offsets, mask=mask), mask=mask)
    for i in range(BLOCK):
        if pid * BLOCK + i >= n:
            break
'''
