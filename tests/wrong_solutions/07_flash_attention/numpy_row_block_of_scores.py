"""Gathers, for each query tile, its scores against every key tile into one tile_q x N block before the
softmax: the memory grows with tile_q x N, not O(N·d)."""

REPLACES = "flash_attention_numpy_solution"
FAMILY = "memory"
FAILS = {"check_flash_attention_numpy": "bytes per query row"}
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
        s = np.concatenate([qt @ k[k0:k0 + tile_k].T for k0 in range(0, n, tile_k)], axis=1)  # tile_q × N
        m = s.max(axis=1)
        p = np.exp(s - m[:, None])
        l = p.sum(axis=1)
        for k0 in range(0, n, tile_k):
            acc += p[:, k0:k0 + tile_k] @ v[k0:k0 + tile_k]
        o[q0:q0 + rows] = acc / l[:, None]
        lse[q0:q0 + rows] = m + np.log(l)
    return o, lse
'''
