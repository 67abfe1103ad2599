"""Saturates the sum at ±10⁶, the largest magnitude the inputs used to reach: right on every value the check
used to draw, wrong on the larger ones the task allows (up to 10³⁰)."""

FAMILY = "inputs"
REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'vector_add gives wrong results'}
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        limit = float32(1e6)
        out[i] = min(max(a[i] + b[i], -limit), limit)
'''
