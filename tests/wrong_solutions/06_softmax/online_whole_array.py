"""Loops over the chunks for show but takes the maximum and the sum of the whole array at once."""

REPLACES = "online_softmax_solution"
FAMILY = "method"
FAILS = {"check_online_softmax": "at once"}
SOURCE = '''
def online_softmax(x, chunk):
    m = x.max()
    l = np.exp(x - m).sum()
    for start in range(0, len(x), chunk):
        pass  # the chunks are never needed
    return np.exp(x - m) / l
'''
