"""Takes the new block's maximum as the running maximum: right only when the maxima arrive in increasing
order."""

FAMILY = "inputs"
REPLACES = "ring_step_solution"
FAILS = {'check_ring_step': 'ring_step gives wrong results'}
SOURCE = '''
def ring_step(m, l, acc, q, k, v, q_pos, k_pos, causal):
    s = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(q.shape[1])
    if causal:
        s = np.where(k_pos[None, :] <= q_pos[:, None], s, -np.inf)
    m_block = s.max(axis=1)
    m_new = np.where(np.isinf(m_block), m, m_block)
    shift = np.where(np.isinf(m_new), 0.0, m_new)
    alpha = np.exp(m - shift)
    p = np.exp(s - shift[:, None])
    return m_new, alpha * l + p.sum(axis=1), alpha[:, None] * acc + p @ v
'''
