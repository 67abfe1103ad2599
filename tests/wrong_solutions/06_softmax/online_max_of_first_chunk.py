"""Takes the maximum of the first chunk and never updates it: right while no later element is 89 above."""

REPLACES = "online_softmax_solution"
FAMILY = "inputs"
FAILS = {"check_online_softmax": "produced NaN or infinity"}
SOURCE = '''
def online_softmax(x, chunk):
    """softmax(x) of a 1-D float32 vector, read chunk by chunk: one pass for m and l, one for the output."""
    m = np.float32(-np.inf)  # running maximum of the elements seen so far
    l = np.float32(0.0)  # running sum of exp(x_i - m) over the elements seen so far
    for start in range(0, len(x), chunk):  # pass 1: m and l together
        block = x[start:start + chunk]  # the last chunk may be shorter: slicing handles it
        if start == 0:
            m = block.max()  # the first chunk's maximum stands in for all of x's
        l = l + np.exp(block - m).sum()
    y = np.empty(len(x), dtype=np.float32)
    for start in range(0, len(x), chunk):  # pass 2: the output, chunk by chunk
        y[start:start + chunk] = np.exp(x[start:start + chunk] - m) / l
    return y
'''
