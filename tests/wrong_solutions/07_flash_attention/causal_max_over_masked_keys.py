"""Takes each tile's maximum over all its keys, the masked ones (after the query) included: right unless a
masked key scores 104 above every visible one, when every visible exp underflows."""

REPLACES = "flash_attention_causal_solution"
FAMILY = "inputs"
FAILS = {"check_flash_attention_causal": "produced NaN or infinity"}
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
            tile_max = m
            for j in range(min(TILE, n - start)):  # every key of the tile, masked ones included
                s = float32(0.0)
                for c in range(HEAD_DIM):
                    s += q_row[c] * k_tile[j, c]
                tile_max = max(tile_max, s)
            alpha = math.exp(m - tile_max)
            l = l * alpha
            for c in range(HEAD_DIM):
                acc[c] = acc[c] * alpha
            m = tile_max
            for j in range(min(TILE, row - start + 1)):  # keys start + j <= row
                s = float32(0.0)
                for c in range(HEAD_DIM):
                    s += q_row[c] * k_tile[j, c]
                p = math.exp(s - m)
                l = l + p
                for c in range(HEAD_DIM):
                    acc[c] = acc[c] + p * v_tile[j, c]
        cuda.syncthreads()
    if valid:
        for c in range(HEAD_DIM):
            o[head, row, c] = acc[c] / l
        lse[head, row] = m + math.log(l)
'''
