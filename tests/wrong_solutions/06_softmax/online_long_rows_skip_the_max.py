"""Skips the running maximum on vectors of more than 100000 elements "to save a pass": exp overflows there on
large logits, but no vector the check builds is that long. The constant is refused with its line."""

REPLACES = "online_softmax_solution"
FAMILY = "inputs"
FAILS = {"check_online_softmax": "larger than every size this check runs"}
SOURCE = '''
def online_softmax(x, chunk):
    long_row = len(x) > 100000
    m = np.float32(0.0) if long_row else np.float32(-np.inf)
    l = np.float32(0.0)
    for start in range(0, len(x), chunk):
        block = x[start:start + chunk]
        m_new = m if long_row else max(m, block.max())
        l = l * np.exp(m - m_new) + np.exp(block - m_new).sum()
        m = m_new
    y = np.empty(len(x), dtype=np.float32)
    for start in range(0, len(x), chunk):
        y[start:start + chunk] = np.exp(x[start:start + chunk] - m) / l
    return y
'''
