"""Finds each row's maximum in a first pass over the key tiles, then sums in a second: K is read twice per
query tile, the pass the online softmax saves."""

REPLACES = "flash_attention_numpy_solution"
FAMILY = "method"
FAILS = {"check_flash_attention_numpy": "rows of k"}
SOURCE = '''
def flash_attention_numpy(q, k, v, tile_q, tile_k):
    """Attention of one head, tile by tile: returns o (N, d) and lse (N,), never an N×N array."""
    n, d = q.shape
    scale = 1.0 / math.sqrt(d)
    o = np.empty((n, d), dtype=np.float32)
    lse = np.empty(n, dtype=np.float32)
    for q0 in range(0, n, tile_q):  # FlashAttention-2 order: query tiles outside
        qt = q[q0:q0 + tile_q] * np.float32(scale)
        rows = qt.shape[0]
        m = np.full(rows, -np.inf, dtype=np.float32)  # running max of each row
        l = np.zeros(rows, dtype=np.float32)  # running sum of exp(s - m)
        acc = np.zeros((rows, d), dtype=np.float32)  # running, unnormalised output
        for k0 in range(0, n, tile_k):  # pass 1: the maximum
            m = np.maximum(m, (qt @ k[k0:k0 + tile_k].T).max(axis=1))
        for k0 in range(0, n, tile_k):  # pass 2: the sums, with m known
            p = np.exp(qt @ k[k0:k0 + tile_k].T - m[:, None])
            l = l + p.sum(axis=1)
            acc = acc + p @ v[k0:k0 + tile_k]
        o[q0:q0 + rows] = acc / l[:, None]
        lse[q0:q0 + rows] = m + np.log(l)
    return o, lse
'''
