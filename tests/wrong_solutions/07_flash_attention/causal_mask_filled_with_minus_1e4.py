"""Masks the keys after the query with a score of -1e4 instead of leaving them out: right while some visible
score lies well above -1e4; on rows whose visible scores all lie below it, the masked keys outweigh them."""

REPLACES = 'flash_attention_causal_solution'
FAMILY = 'inputs'
FAILS = {'check_flash_attention_causal': 'wrong results'}
SOURCE = '''
@cuda.jit
def flash_attention_causal(q, k, v, o, lse, scale):
    head = cuda.blockIdx.y
    t = cuda.threadIdx.x
    n = q.shape[1]
    first_row = cuda.blockIdx.x * TILE
    row = first_row + t
    valid = row < n
    k_tile = cuda.shared.array((TILE, HEAD_DIM), float32)
    v_tile = cuda.shared.array((TILE, HEAD_DIM), float32)
    q_row = cuda.local.array(HEAD_DIM, float32)
    acc = cuda.local.array(HEAD_DIM, float32)
    for c in range(HEAD_DIM):
        q_row[c] = q[head, row, c] * scale if valid else float32(0.0)
        acc[c] = float32(0.0)
    m = float32(-math.inf)
    l = float32(0.0)
    for start in range(0, first_row + 1, TILE):  # key tiles up to and including the diagonal tile
        if start + t < n:
            for c in range(HEAD_DIM):
                k_tile[t, c] = k[head, start + t, c]
                v_tile[t, c] = v[head, start + t, c]
        cuda.syncthreads()
        if valid:
            for j in range(min(TILE, n - start)):  # every key of the tile, the masked ones at -1e4
                s = float32(0.0)
                for c in range(HEAD_DIM):
                    s += q_row[c] * k_tile[j, c]
                if start + j > row:
                    s = float32(-1e4)
                m_new = max(m, s)
                alpha = math.exp(m - m_new)
                p = math.exp(s - m_new)
                l = l * alpha + p
                for c in range(HEAD_DIM):
                    acc[c] = acc[c] * alpha + p * v_tile[j, c]
                m = m_new
        cuda.syncthreads()
    if valid:
        for c in range(HEAD_DIM):
            o[head, row, c] = acc[c] / l
        lse[head, row] = m + math.log(l)
    ### END SOLUTION'''
