"""Reshapes the positions into rows of p: fails when p does not divide n."""

FAMILY = "shapes"
REPLACES = "stripes_solution"
FAILS = {'check_stripes': 'ValueError'}
SOURCE = '''
def stripes(n, p):
    return list(np.arange(n).reshape(-1, p).T)
'''
