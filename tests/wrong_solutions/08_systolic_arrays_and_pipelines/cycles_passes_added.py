"""Adds the weight tiles along K and along N instead of multiplying them: right in one pass, wrong when W
needs several tiles in both directions."""

REPLACES = 'systolic_cycles_solution'
FAMILY = 'method'
FAILS = {'check_systolic_cycles': 'right wherever the product fits the array in one pass'}
SOURCE = '''
def systolic_cycles(m, k, n, rows, cols):
    passes = (k + rows - 1) // rows + (n + cols - 1) // cols - 1
    return passes * (m + rows + cols - 2)
'''
