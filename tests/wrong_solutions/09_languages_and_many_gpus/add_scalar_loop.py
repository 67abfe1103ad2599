"""One element at a time, as a CUDA thread would: right values, BLOCK loads per program."""

FAMILY = "method"
REPLACES = "scaled_add_solution"
FAILS = {'check_scaled_add': 'tl.load calls in one program'}
SOURCE = '''
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for i in range(BLOCK):
        index = pid * BLOCK + i
        x = tl.load(x_ptr + index, mask=index < n)
        y = tl.load(y_ptr + index, mask=index < n)
        tl.store(out_ptr + index, alpha * x + y, mask=index < n)
'''
