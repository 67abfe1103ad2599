"""Starts the running maximum at -1e4, a "very negative" number, instead of -inf: right while some element
lies above -1e4, NaN on a vector whose every logit lies below it (masked scores, log-probabilities)."""

REPLACES = 'online_softmax_solution'
FAMILY = 'inputs'
FAILS = {'check_online_softmax': 'produced NaN'}
SOURCE = '''
def online_softmax(x, chunk):
    """softmax(x) of a 1-D float32 vector, read chunk by chunk: one pass for m and l, one for the output."""
    m = np.float32(-1e4)  # running maximum of the elements seen so far
    l = np.float32(0.0)  # running sum of exp(x_i - m) over the elements seen so far
    for start in range(0, len(x), chunk):  # pass 1: m and l together
        block = x[start:start + chunk]  # the last chunk may be shorter: slicing handles it
        m_new = max(m, block.max())
        l = l * np.exp(m - m_new) + np.exp(block - m_new).sum()  # rescale the old sum to the new max
        m = m_new
    y = np.empty(len(x), dtype=np.float32)
    for start in range(0, len(x), chunk):  # pass 2: the output, chunk by chunk
        y[start:start + chunk] = np.exp(x[start:start + chunk] - m) / l
    return y
    ### END SOLUTION'''
