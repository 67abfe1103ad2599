"""Sums exp(x) chunk by chunk without subtracting a maximum: exp overflows to inf on large logits."""

REPLACES = "online_softmax_solution"
FAMILY = "inputs"
FAILS = {"check_online_softmax": "produced NaN or infinity"}
SOURCE = '''
def online_softmax(x, chunk):
    l = np.float32(0.0)
    for start in range(0, len(x), chunk):
        l += np.exp(x[start:start + chunk]).sum()
    y = np.empty(len(x), dtype=np.float32)
    for start in range(0, len(x), chunk):
        y[start:start + chunk] = np.exp(x[start:start + chunk]) / l
    return y
'''
