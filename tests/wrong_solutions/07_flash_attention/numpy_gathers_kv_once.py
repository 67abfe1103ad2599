"""Gathers K and V tile by tile into whole arrays once, then does a plain softmax per query row: no online
recurrence, O(N) scores per row."""
REPLACES = "flash_attention_numpy_solution"
FAMILY = "method"
FAILS = {"check_flash_attention_numpy": "but it read only"}
SOURCE = '''
def flash_attention_numpy(q, k, v, tile_q, tile_k):
    n, d = q.shape
    scale = 1.0 / math.sqrt(d)
    o = np.empty((n, d), dtype=np.float32)
    lse = np.empty(n, dtype=np.float32)
    keys = np.concatenate([k[k0:k0 + tile_k] for k0 in range(0, n, tile_k)])
    values = np.concatenate([v[k0:k0 + tile_k] for k0 in range(0, n, tile_k)])
    for i in range(n):
        s = keys @ (q[i] * np.float32(scale))
        m = s.max()
        e = np.exp(s - m)
        total = e.sum()
        o[i] = e @ values / total
        lse[i] = m + np.log(total)
    return o, lse
'''
