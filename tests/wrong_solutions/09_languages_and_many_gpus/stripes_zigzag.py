"""Zig-zag chunks (device r holds chunks r and 2p - 1 - r): balanced when 2p divides n, not otherwise."""

FAMILY = "method"
REPLACES = "stripes_solution"
FAILS = {'check_stripes': 'The task asks for stripes'}
SOURCE = '''
def stripes(n, p):
    chunks = np.array_split(np.arange(n), 2 * p)
    return [np.concatenate([chunks[r], chunks[2 * p - 1 - r]]) for r in range(p)]
'''
