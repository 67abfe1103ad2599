"""Stops the loop over key tiles at 72 keys, a bound sized from the longest sequence of the examples (70):
right on every example, wrong on a sequence just past them."""

REPLACES = 'flash_attention_solution'
FAMILY = 'shapes'
FAILS = {'check_flash_attention': 'wrong results'}
SOURCE = '''
MAX_KEYS = 72

@cuda.jit
def flash_attention(q, k, v, o, lse, scale):
    head = cuda.blockIdx.y
    t = cuda.threadIdx.x
    n = q.shape[1]
    row = cuda.blockIdx.x * TILE + t  # this thread's query row
    valid = row < n  # rows past the end still load K/V and reach every barrier
    k_tile = cuda.shared.array((TILE, HEAD_DIM), float32)
    v_tile = cuda.shared.array((TILE, HEAD_DIM), float32)
    q_row = cuda.local.array(HEAD_DIM, float32)
    acc = cuda.local.array(HEAD_DIM, float32)
    for c in range(HEAD_DIM):
        q_row[c] = q[head, row, c] * scale if valid else float32(0.0)
        acc[c] = float32(0.0)
    m = float32(-math.inf)
    l = float32(0.0)
    for start in range(0, min(n, MAX_KEYS), TILE):
        if start + t < n:  # thread t loads key row start + t
            for c in range(HEAD_DIM):
                k_tile[t, c] = k[head, start + t, c]
                v_tile[t, c] = v[head, start + t, c]
        cuda.syncthreads()  # the tile is complete
        if valid:
            for j in range(min(TILE, n - start)):
                s = float32(0.0)
                for c in range(HEAD_DIM):
                    s += q_row[c] * k_tile[j, c]
                m_new = max(m, s)
                alpha = math.exp(m - m_new)
                p = math.exp(s - m_new)
                l = l * alpha + p
                for c in range(HEAD_DIM):
                    acc[c] = acc[c] * alpha + p * v_tile[j, c]
                m = m_new
        cuda.syncthreads()  # everybody is done with the tile before the next one overwrites it
    if valid:
        for c in range(HEAD_DIM):
            o[head, row, c] = acc[c] / l
        lse[head, row] = m + math.log(l)
    ### END SOLUTION'''
