"""Three buffers per operand where the task asks for two: right values and one barrier per tile, but
1.5 times the shared memory the method needs (fewer blocks fit on a multiprocessor)."""

FAMILY = 'memory'
REPLACES = 'matmul_double_buffered_solution'
FAILS = {'check_double_buffered_matmul': 'bytes of static shared memory'}
SOURCE = '''
@cuda.jit
def matmul_double_buffered(a, b, c):
    sA = cuda.shared.array((3, TILE, TILE), float32)
    sB = cuda.shared.array((3, TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    sA[0, ty, tx] = a[row, tx] if row < m and tx < k else float32(0.0)
    sB[0, ty, tx] = b[ty, col] if ty < k and col < n else float32(0.0)
    cuda.syncthreads()
    acc = float32(0.0)
    tiles = (k + TILE - 1) // TILE
    for t in range(tiles):
        this = t % 3
        if t + 1 < tiles:  # the next tiles go into the other buffer
            k0 = (t + 1) * TILE
            sA[(t + 1) % 3, ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
            sB[(t + 1) % 3, ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
        for j in range(TILE):
            acc += sA[this, ty, j] * sB[this, j, tx]
        cuda.syncthreads()  # tile t + 1 is complete, and nobody reads buffer `this` any more
    if row < m and col < n:
        c[row, col] = acc
'''
