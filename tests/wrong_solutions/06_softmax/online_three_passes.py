"""Reads the chunks three times (one pass for the maximum, one for the sum, one for the output): right
values, but not the online method, which finds m and l in one pass."""

REPLACES = "online_softmax_solution"
FAMILY = "method"
FAILS = {"check_online_softmax": "passes"}
SOURCE = '''
def online_softmax(x, chunk):
    m = np.float32(-np.inf)
    for start in range(0, len(x), chunk):
        m = max(m, x[start:start + chunk].max())
    l = np.float32(0.0)
    for start in range(0, len(x), chunk):
        l += np.exp(x[start:start + chunk] - m).sum()
    y = np.empty(len(x), dtype=np.float32)
    for start in range(0, len(x), chunk):
        y[start:start + chunk] = np.exp(x[start:start + chunk] - m) / l
    return y
'''
