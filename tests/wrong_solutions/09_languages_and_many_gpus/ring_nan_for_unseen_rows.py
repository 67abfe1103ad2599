"""No guard for rows that have seen no key: exp(-inf - (-inf)) is NaN when a block lies wholly in a query's
future."""

FAMILY = "inputs"
REPLACES = "ring_step_solution"
FAILS = {'check_ring_step': 'produced NaN or infinity'}
SOURCE = '''
def ring_step(m, l, acc, q, k, v, q_pos, k_pos, causal):
    s = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(q.shape[1])
    if causal:
        s = np.where(k_pos[None, :] <= q_pos[:, None], s, -np.inf)
    m_new = np.maximum(m, s.max(axis=1))
    alpha = np.exp(m - m_new)
    p = np.exp(s - m_new[:, None])
    return m_new, alpha * l + p.sum(axis=1), alpha[:, None] * acc + p @ v
'''
