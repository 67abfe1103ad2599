"""Rescales the sum but not the accumulated output when the maximum grows."""

FAMILY = "inputs"
REPLACES = "ring_step_solution"
FAILS = {'check_ring_step': 'first wrong for a second block whose scores raise the maximum'}
SOURCE = '''
def ring_step(m, l, acc, q, k, v, q_pos, k_pos, causal):
    s = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(q.shape[1])
    if causal:
        s = np.where(k_pos[None, :] <= q_pos[:, None], s, -np.inf)
    m_new = np.maximum(m, s.max(axis=1))
    shift = np.where(np.isinf(m_new), 0.0, m_new)
    alpha = np.exp(m - shift)
    p = np.exp(s - shift[:, None])
    return m_new, alpha * l + p.sum(axis=1), acc + p @ v
'''
