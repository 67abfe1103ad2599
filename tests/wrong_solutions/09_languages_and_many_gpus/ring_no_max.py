"""Exponentiates the raw scores: they reach the thousands."""

FAMILY = "inputs"
REPLACES = "ring_step_solution"
FAILS = {'check_ring_step': 'produced NaN or infinity'}
SOURCE = '''
def ring_step(m, l, acc, q, k, v, q_pos, k_pos, causal):
    s = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(q.shape[1])
    if causal:
        s = np.where(k_pos[None, :] <= q_pos[:, None], s, -np.inf)
    p = np.exp(s)
    return np.zeros(len(q)), l + p.sum(axis=1), acc + p @ v
'''
