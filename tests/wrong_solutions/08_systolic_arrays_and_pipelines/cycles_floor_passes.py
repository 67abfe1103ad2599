"""Counts passes with floor division: a last, partial weight tile is forgotten."""

REPLACES = 'systolic_cycles_solution'
FAMILY = 'shapes'
FAILS = {'check_systolic_cycles': 'passes counted with //'}
SOURCE = '''
def systolic_cycles(m, k, n, rows, cols):
    passes = (k // rows) * (n // cols)
    return passes * (m + rows + cols - 2)
'''
