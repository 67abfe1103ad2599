"""Keeps every block a device has met in a global cache and recomputes attention from scratch each step:
ignores the state it is given (no online recurrence)."""
REPLACES = "ring_step_solution"
FAMILY = "method"
FAILS = {"check_ring_step": "elements of `o` are wrong"}
SOURCE = '''
SEEN = {}


def ring_step(m, l, acc, q, k, v, q_pos, k_pos, causal):
    key = (q.tobytes(), q_pos.tobytes())
    SEEN.setdefault(key, []).append((k, v, k_pos))
    ks = np.concatenate([b[0] for b in SEEN[key]]).astype(np.float64)
    vs = np.concatenate([b[1] for b in SEEN[key]]).astype(np.float64)
    ps = np.concatenate([b[2] for b in SEEN[key]])
    s = q.astype(np.float64) @ ks.T / np.sqrt(q.shape[1])
    if causal:
        s = np.where(ps[None, :] <= q_pos[:, None], s, -np.inf)
    m_new = s.max(axis=1)
    shift = np.where(np.isinf(m_new), 0.0, m_new)
    p = np.exp(s - shift[:, None])
    return m_new, p.sum(axis=1), p @ vs
'''
