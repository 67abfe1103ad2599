"""Runs at most five tile steps (K up to 80, past the largest K of the visible examples, 70): right on
every hand-picked shape, wrong for a longer K."""

FAMILY = 'shapes'
REPLACES = 'matmul_double_buffered_solution'
FAILS = {'check_double_buffered_matmul': 'gives wrong results'}
SOURCE = '''
@cuda.jit
def matmul_double_buffered(a, b, c):
    sA = cuda.shared.array((2, TILE, TILE), float32)
    sB = cuda.shared.array((2, TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    sA[0, ty, tx] = a[row, tx] if row < m and tx < k else float32(0.0)
    sB[0, ty, tx] = b[ty, col] if ty < k and col < n else float32(0.0)
    cuda.syncthreads()
    acc = float32(0.0)
    tiles = min((k + TILE - 1) // TILE, 5)
    for t in range(tiles):
        this = t % 2
        if t + 1 < tiles:  # the next tiles go into the other buffer
            k0 = (t + 1) * TILE
            sA[1 - this, ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
            sB[1 - this, ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        for j in range(TILE):
            acc += sA[this, ty, j] * sB[this, j, tx]
        cuda.syncthreads()  # tile t + 1 is complete, and nobody reads buffer `this` any more
    if row < m and col < n:
        c[row, col] = acc
'''
