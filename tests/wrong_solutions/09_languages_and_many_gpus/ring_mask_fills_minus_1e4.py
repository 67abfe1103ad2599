"""Fills the causal mask's scores with -1e4 instead of -inf: right while a query's visible scores lie above
-1e4, wrong when they all lie below it, where the masked future keys win."""

FAMILY = "inputs"
REPLACES = "ring_step_solution"
FAILS = {'check_ring_step': 'inputs=deep'}
SOURCE = '''
def ring_step(m, l, acc, q, k, v, q_pos, k_pos, causal):
    s = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(q.shape[1])
    if causal:
        s = np.where(k_pos[None, :] <= q_pos[:, None], s, -1e4)
    m_new = np.maximum(m, s.max(axis=1))
    shift = np.where(np.isinf(m_new), 0.0, m_new)
    alpha = np.exp(m - shift)
    p = np.exp(s - shift[:, None])
    return m_new, alpha * l + p.sum(axis=1), alpha[:, None] * acc + p @ v
'''
