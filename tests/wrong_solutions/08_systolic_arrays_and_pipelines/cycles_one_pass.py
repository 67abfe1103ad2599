"""Counts one pass whatever the size of W: right only when W fits the array."""

REPLACES = 'systolic_cycles_solution'
FAMILY = 'shapes'
FAILS = {'check_systolic_cycles': 'one pass only'}
SOURCE = '''
def systolic_cycles(m, k, n, rows, cols):
    passes = 1
    return passes * (m + rows + cols - 2)
'''
