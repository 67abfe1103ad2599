"""Keeps the running maximum and sum as NumPy float64 numbers "for accuracy": always within tolerance, and
every exp and sum that touches them computed in float64 where the task asks for float32."""

REPLACES = 'online_softmax_solution'
FAMILY = 'method'
FAILS = {'check_online_softmax': 'computes in float64, where the task is float32'}
SOURCE = '''
def online_softmax(x, chunk):
    """softmax(x) of a 1-D float32 vector, read chunk by chunk: one pass for m and l, one for the output."""
    m = np.float64(-np.inf)  # running maximum of the elements seen so far
    l = np.float64(0.0)  # running sum of exp(x_i - m) over the elements seen so far
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
