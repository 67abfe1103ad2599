"""Stripes over the first p * (n // p) positions, the remainder piled on the last device: balanced only
when p divides n."""

FAMILY = "shapes"
REPLACES = "stripes_solution"
FAILS = {'check_stripes': 'does not balance'}
SOURCE = '''
def stripes(n, p):
    whole = p * (n // p)
    layout = [np.arange(r, whole, p) for r in range(p)]
    layout[-1] = np.concatenate([layout[-1], np.arange(whole, n)])
    return layout
'''
