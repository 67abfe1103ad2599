"""Contiguous blocks (the plain ring layout): under a causal mask device 0 idles."""

FAMILY = "method"
REPLACES = "stripes_solution"
FAILS = {'check_stripes': 'does not balance'}
SOURCE = '''
def stripes(n, p):
    return np.array_split(np.arange(n), p)
'''
