"""Each pass one cycle short: counts the cycle the last sum leaves as the end, not one past it."""

REPLACES = 'systolic_cycles_solution'
FAMILY = 'index'
FAILS = {'check_systolic_cycles': 'one cycle short'}
SOURCE = '''
def systolic_cycles(m, k, n, rows, cols):
    passes = cdiv(k, rows) * cdiv(n, cols)
    return passes * (m + rows + cols - 3)
'''
