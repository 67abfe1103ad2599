"""Reads each chunk once but keeps them all, then takes the softmax of the reassembled array."""

REPLACES = "online_softmax_solution"
FAMILY = "method"
FAILS = {"check_online_softmax": "once"}
SOURCE = '''
def online_softmax(x, chunk):
    chunks = []
    for start in range(0, len(x), chunk):
        chunks.append(x[start:start + chunk])
    whole = np.concatenate(chunks)
    e = np.exp(whole - whole.max())
    return e / e.sum()
'''
