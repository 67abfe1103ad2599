"""Stops every stripe at the last whole round: the last n % p positions are on no device."""

FAMILY = "shapes"
REPLACES = "stripes_solution"
FAILS = {'check_stripes': 'are wrong'}
SOURCE = '''
def stripes(n, p):
    return [np.arange(r, n - n % p, p) for r in range(p)]
'''
