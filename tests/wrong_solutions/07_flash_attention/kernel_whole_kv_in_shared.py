"""Stages all of K and V of the head in shared memory (room for 128 keys) instead of one tile at a time."""

REPLACES = "flash_attention_solution"
FAMILY = "memory"
FAILS = {"check_flash_attention": "shared memory"}
SOURCE = '''
@cuda.jit
def flash_attention(q, k, v, o, lse, scale):
    head = cuda.blockIdx.y
    t = cuda.threadIdx.x
    n = q.shape[1]
    row = cuda.blockIdx.x * TILE + t
    valid = row < n
    k_all = cuda.shared.array((128, HEAD_DIM), float32)  # the whole sequence, up to 128 keys
    v_all = cuda.shared.array((128, HEAD_DIM), float32)
    q_row = cuda.local.array(HEAD_DIM, float32)
    acc = cuda.local.array(HEAD_DIM, float32)
    for key in range(t, n, TILE):
        for c in range(HEAD_DIM):
            k_all[key, c] = k[head, key, c]
            v_all[key, c] = v[head, key, c]
    cuda.syncthreads()
    for c in range(HEAD_DIM):
        q_row[c] = q[head, row, c] * scale if valid else float32(0.0)
        acc[c] = float32(0.0)
    m = float32(-math.inf)
    l = float32(0.0)
    if valid:
        for j in range(n):
            s = float32(0.0)
            for c in range(HEAD_DIM):
                s += q_row[c] * k_all[j, c]
            m_new = max(m, s)
            alpha = math.exp(m - m_new)
            p = math.exp(s - m_new)
            l = l * alpha + p
            for c in range(HEAD_DIM):
                acc[c] = acc[c] * alpha + p * v_all[j, c]
            m = m_new
        for c in range(HEAD_DIM):
            o[head, row, c] = acc[c] / l
        lse[head, row] = m + math.log(l)
'''
