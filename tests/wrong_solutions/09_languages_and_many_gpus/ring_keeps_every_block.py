"""Keeps every block it has been given in a module-level list and recomputes the softmax over all of them:
not a ring step (one device would hold all of K and V), and wrong as soon as two devices share the
process."""

FAMILY = "method"
REPLACES = "ring_step_solution"
FAILS = {'check_ring_step': 'a state that already holds other keys'}
SOURCE = '''
SEEN = []


def ring_step(m, l, acc, q, k, v, q_pos, k_pos, causal):
    if np.all(l == 0):  # a new pass begins
        SEEN.clear()
    SEEN.append((k, v, k_pos))
    keys = np.concatenate([block[0] for block in SEEN]).astype(np.float64)
    values = np.concatenate([block[1] for block in SEEN]).astype(np.float64)
    positions = np.concatenate([block[2] for block in SEEN])
    s = q.astype(np.float64) @ keys.T / np.sqrt(q.shape[1])
    if causal:
        s = np.where(positions[None, :] <= q_pos[:, None], s, -np.inf)
    m_new = s.max(axis=1)
    shift = np.where(np.isinf(m_new), 0.0, m_new)
    p = np.exp(s - shift[:, None])
    return m_new, p.sum(axis=1), p @ values
'''
