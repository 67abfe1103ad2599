"""Scales each query tile in place to save a copy: the tile is a view of q, so the caller's queries come back
scaled (and a second call gives other results). The check's inputs are read-only, as a caller's are."""

REPLACES = 'flash_attention_numpy_solution'
FAMILY = 'memory'
FAILS = {'check_flash_attention_numpy': 'read-only'}
SOURCE = '''
def flash_attention_numpy(q, k, v, tile_q, tile_k):
    """Attention of one head, tile by tile: returns o (N, d) and lse (N,), never an N×N array."""
    n, d = q.shape
    scale = 1.0 / math.sqrt(d)
    o = np.empty((n, d), dtype=np.float32)
    lse = np.empty(n, dtype=np.float32)
    for q0 in range(0, n, tile_q):  # FlashAttention-2 order: query tiles outside
        qt = q[q0:q0 + tile_q]
        qt *= np.float32(scale)  # in place: a view of q
        rows = qt.shape[0]
        m = np.full(rows, -np.inf, dtype=np.float32)  # running max of each row
        l = np.zeros(rows, dtype=np.float32)  # running sum of exp(s - m)
        acc = np.zeros((rows, d), dtype=np.float32)  # running, unnormalised output
        for k0 in range(0, n, tile_k):
            s = qt @ k[k0:k0 + tile_k].T  # a tile_q × tile_k block of scores
            m_new = np.maximum(m, s.max(axis=1))
            alpha = np.exp(m - m_new)  # rescales what was accumulated under the old max
            p = np.exp(s - m_new[:, None])
            l = alpha * l + p.sum(axis=1)
            acc = alpha[:, None] * acc + p @ v[k0:k0 + tile_k]
            m = m_new
        o[q0:q0 + rows] = acc / l[:, None]
        lse[q0:q0 + rows] = m + np.log(l)
    return o, lse'''
