"""Numbers positions from 1: position n does not exist and position 0 is on no device."""

FAMILY = "index"
REPLACES = "stripes_solution"
FAILS = {'check_stripes': 'hands out position'}
SOURCE = '''
def stripes(n, p):
    return [np.arange(r + 1, n + 1, p) for r in range(p)]
'''
