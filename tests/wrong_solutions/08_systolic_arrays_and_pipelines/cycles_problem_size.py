"""Uses the product's K and N for the fill where the array's rows and cols belong: right only when W is
exactly the array's size."""

REPLACES = 'systolic_cycles_solution'
FAMILY = 'shapes'
FAILS = {'check_systolic_cycles': "the problem's K and N"}
SOURCE = '''
def systolic_cycles(m, k, n, rows, cols):
    passes = cdiv(k, rows) * cdiv(n, cols)
    return passes * (m + k + n - 2)
'''
