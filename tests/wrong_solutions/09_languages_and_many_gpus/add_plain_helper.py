"""Calls a helper without @triton.jit: plain Python under the interpreter, refused by the compiler."""

FAMILY = "compiler"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'must itself be a @triton.jit function'}
SOURCE = '''
def axpy(a, x, y):
    return a * x + y


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, axpy(alpha, x, tl.load(y_ptr + offsets, mask=mask)), mask=mask)
'''
