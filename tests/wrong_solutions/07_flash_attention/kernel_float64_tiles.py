"""Stages the K and V tiles in float64 shared arrays: always within tolerance, 1.5 times the shared memory,
and float64 loads and products where the task asks for float32."""

REPLACES = 'flash_attention_solution'
FAMILY = 'method'
FAILS = {'check_flash_attention': 'float64'}
SOURCE = '''
from numba import float64

@cuda.jit
def flash_attention(q, k, v, o, lse, scale):
    head = cuda.blockIdx.y
    t = cuda.threadIdx.x
    n = q.shape[1]
    row = cuda.blockIdx.x * TILE + t  # this thread's query row
    valid = row < n  # rows past the end still load K/V and reach every barrier
    k_tile = cuda.shared.array((TILE, HEAD_DIM), float64)
    v_tile = cuda.shared.array((TILE, HEAD_DIM), float64)
    q_row = cuda.local.array(HEAD_DIM, float32)
    acc = cuda.local.array(HEAD_DIM, float32)
    for c in range(HEAD_DIM):
        q_row[c] = q[head, row, c] * scale if valid else float32(0.0)
        acc[c] = float32(0.0)
    m = float32(-math.inf)
    l = float32(0.0)
    for start in range(0, n, TILE):
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
