"""Keeps the row's scores in a local array of 1024 (a two-pass softmax per thread): N scores per thread, N x
N in all."""

REPLACES = "flash_attention_solution"
FAMILY = "memory"
FAILS = {"check_flash_attention": "local"}
SOURCE = '''
@cuda.jit
def flash_attention(q, k, v, o, lse, scale):
    head = cuda.blockIdx.y
    t = cuda.threadIdx.x
    n = q.shape[1]
    row = cuda.blockIdx.x * TILE + t
    valid = row < n
    k_tile = cuda.shared.array((TILE, HEAD_DIM), float32)
    v_tile = cuda.shared.array((TILE, HEAD_DIM), float32)
    q_row = cuda.local.array(HEAD_DIM, float32)
    acc = cuda.local.array(HEAD_DIM, float32)
    scores = cuda.local.array(1024, float32)  # every score of the row
    for c in range(HEAD_DIM):
        q_row[c] = q[head, row, c] * scale if valid else float32(0.0)
        acc[c] = float32(0.0)
    m = float32(-math.inf)
    for start in range(0, n, TILE):  # pass 1: the scores and their maximum
        if start + t < n:
            for c in range(HEAD_DIM):
                k_tile[t, c] = k[head, start + t, c]
        cuda.syncthreads()
        if valid:
            for j in range(min(TILE, n - start)):
                s = float32(0.0)
                for c in range(HEAD_DIM):
                    s += q_row[c] * k_tile[j, c]
                scores[start + j] = s
                m = max(m, s)
        cuda.syncthreads()
    l = float32(0.0)
    for start in range(0, n, TILE):  # pass 2: the weights times V
        if start + t < n:
            for c in range(HEAD_DIM):
                v_tile[t, c] = v[head, start + t, c]
        cuda.syncthreads()
        if valid:
            for j in range(min(TILE, n - start)):
                p = math.exp(scores[start + j] - m)
                l += p
                for c in range(HEAD_DIM):
                    acc[c] += p * v_tile[j, c]
        cuda.syncthreads()
    if valid:
        for c in range(HEAD_DIM):
            o[head, row, c] = acc[c] / l
        lse[head, row] = m + math.log(l)
'''
