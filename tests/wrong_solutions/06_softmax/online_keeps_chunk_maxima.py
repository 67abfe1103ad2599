"""Reads x twice, chunk by chunk, but keeps every chunk's maximum and sum in two lists (2·n/chunk numbers)
and combines them after the first pass: the reads of the online method, not its state (m and l)."""

REPLACES = 'online_softmax_solution'
FAMILY = 'memory'
FAILS = {'check_online_softmax': 'numbers per row between chunks'}
SOURCE = '''
def online_softmax(x, chunk):
    """softmax(x) of a 1-D float32 vector, read chunk by chunk: one pass for m and l, one for the output."""
    maxima, sums = [], []
    for start in range(0, len(x), chunk):  # pass 1: each chunk's maximum and sum, kept
        block = x[start:start + chunk]
        maxima.append(block.max())
        sums.append(np.exp(block - maxima[-1]).sum())
    m = max(maxima)
    l = np.float32(0.0)
    for chunk_max, chunk_sum in zip(maxima, sums):
        l += chunk_sum * np.exp(chunk_max - m)
    y = np.empty(len(x), dtype=np.float32)
    for start in range(0, len(x), chunk):  # pass 2: the output, chunk by chunk
        y[start:start + chunk] = np.exp(x[start:start + chunk] - m) / l
    return y
    ### END SOLUTION'''
