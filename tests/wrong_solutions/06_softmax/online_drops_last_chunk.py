"""Only visits whole chunks: the last, shorter chunk never reaches the maximum or the normaliser."""

REPLACES = "online_softmax_solution"
FAILS = {"check_online_softmax": "produced NaN or infinity"}
SOURCE = '''
def online_softmax(x, chunk):
    m = np.float32(-np.inf)
    l = np.float32(0.0)
    for start in range(0, len(x) - chunk + 1, chunk):
        block = x[start:start + chunk]
        m_new = max(m, block.max())
        l = l * np.exp(m - m_new) + np.exp(block - m_new).sum()
        m = m_new
    return np.exp(x - m) / l
'''
