"""Forgets to rescale the running sum when the maximum grows: old terms stay relative to the old maximum."""

REPLACES = "online_softmax_solution"
FAILS = {"check_online_softmax": "are wrong"}
SOURCE = '''
def online_softmax(x, chunk):
    m = np.float32(-np.inf)
    l = np.float32(0.0)
    for start in range(0, len(x), chunk):
        block = x[start:start + chunk]
        m = max(m, block.max())
        l = l + np.exp(block - m).sum()
    return np.exp(x - m) / l
'''
