"""Small CUDA kernels for the gpusim tests: correct kernels and their buggy twins.

They are plain `@cuda.jit` kernels, so the same file also runs under Numba's simulator.
"""

import math

import numba
from numba import cuda, float32, int32

TILE = 16
WARP = 32


@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def scale_add(a, alpha, beta, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = float32(alpha) * a[i] + beta


@cuda.jit
def block_reverse(a, out):
    buf = cuda.shared.array(64, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    buf[t] = a[i]
    cuda.syncthreads()
    out[i] = buf[cuda.blockDim.x - 1 - t]


@cuda.jit
def block_sum(a, out):
    """Tree reduction in shared memory, one partial sum per block."""
    buf = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            buf[t] += buf[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]


@cuda.jit
def matmul_naive(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def make_matmul_tiled(tile):
    """The course's kernel factory: a tiled matmul specialised for one tile width."""

    @cuda.jit(device=True)
    def dot_tile(sA, sB, ty, tx):
        acc = float32(0.0)
        for k in range(tile):
            acc += sA[ty, k] * sB[k, tx]
        return acc

    @cuda.jit
    def matmul_tiled(A, B, C):
        sA = cuda.shared.array((tile, tile), float32)
        sB = cuda.shared.array((tile, tile), float32)
        x, y = cuda.grid(2)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        acc = float32(0.0)
        for t in range(A.shape[1] // tile):
            sA[ty, tx] = A[y, t * tile + tx]
            sB[ty, tx] = B[t * tile + ty, x]
            cuda.syncthreads()
            acc += dot_tile(sA, sB, ty, tx)
            cuda.syncthreads()
        C[y, x] = acc

    return matmul_tiled


matmul_tiled = make_matmul_tiled(TILE)


@cuda.jit
def matmul_no_sync_after_load(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = float32(0.0)
    for t in range(A.shape[1] // TILE):
        sA[ty, tx] = A[y, t * TILE + tx]
        sB[ty, tx] = B[t * TILE + ty, x]
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[y, x] = acc


@cuda.jit
def matmul_no_sync_before_overwrite(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = float32(0.0)
    for t in range(A.shape[1] // TILE):
        sA[ty, tx] = A[y, t * TILE + tx]
        sB[ty, tx] = B[t * TILE + ty, x]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
    C[y, x] = acc


@cuda.jit
def barrier_in_branch(a):
    t = cuda.threadIdx.x
    if t < 16:
        cuda.syncthreads()
    a[t] = t


@cuda.jit
def early_return(a, n):
    buf = cuda.shared.array(64, float32)
    i = cuda.grid(1)
    if i >= n:
        return
    buf[cuda.threadIdx.x] = a[i]
    cuda.syncthreads()
    a[i] = buf[cuda.threadIdx.x] * 2


@cuda.jit
def histogram_shared_atomic(data, bins):
    local = cuda.shared.array(16, int32)
    t = cuda.threadIdx.x
    if t < 16:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i] % 16, 1)
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def histogram_shared_racy(data, bins):
    local = cuda.shared.array(16, int32)
    t = cuda.threadIdx.x
    if t < 16:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        local[data[i] % 16] += 1
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def scan_double_buffer(a, out):
    """Hillis-Steele inclusive scan of one block, ping-ponging between two buffers."""
    buf = cuda.shared.array((2, 64), float32)
    t = cuda.threadIdx.x
    buf[0, t] = a[t]
    cuda.syncthreads()
    src = 0
    offset = 1
    while offset < cuda.blockDim.x:
        dst = 1 - src
        if t >= offset:
            buf[dst, t] = buf[src, t] + buf[src, t - offset]
        else:
            buf[dst, t] = buf[src, t]
        cuda.syncthreads()
        src = dst
        offset *= 2
    out[t] = buf[src, t]


@cuda.jit
def scan_single_buffer(a, out):
    buf = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    buf[t] = a[t]
    cuda.syncthreads()
    offset = 1
    while offset < cuda.blockDim.x:
        if t >= offset:
            buf[t] += buf[t - offset]
        cuda.syncthreads()
        offset *= 2
    out[t] = buf[t]


@cuda.jit
def stencil_negative_index(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i - 1] + a[i]


@cuda.jit
def uninitialized_shared(out):
    buf = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    if t < 32:
        buf[t] = 1.0
    cuda.syncthreads()
    out[t] = buf[t]


@cuda.jit
def every_block_writes_first(out):
    out[0] = cuda.blockIdx.x


@cuda.jit
def dynamic_shared_views(a, out):
    """Two arrays carved from the launch's dynamic shared memory: the float view aliases the int view."""
    raw = cuda.shared.array(0, int32)
    floats = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    second = floats[n:]
    raw[t] = t
    second[t] = a[t]
    cuda.syncthreads()
    out[t] = floats[n + (t + 1) % n] + raw[(t + 1) % n]


@cuda.jit
def index_report(out):
    """Each thread writes its 3-D coordinates and grid queries into out[z, y, x, :]."""
    x, y, z = cuda.grid(3)
    gx, gy, gz = cuda.gridsize(3)
    out[z, y, x, 0] = cuda.threadIdx.x + 10 * cuda.threadIdx.y + 100 * cuda.threadIdx.z
    out[z, y, x, 1] = cuda.blockIdx.x + 10 * cuda.blockIdx.y + 100 * cuda.blockIdx.z
    out[z, y, x, 2] = cuda.blockDim.x + 10 * cuda.blockDim.y + 100 * cuda.blockDim.z
    out[z, y, x, 3] = cuda.gridDim.x + 10 * cuda.gridDim.y + 100 * cuda.gridDim.z
    out[z, y, x, 4] = gx + 10 * gy + 100 * gz


@cuda.jit
def local_and_const(a, out):
    weights = cuda.const.array_like(a)
    acc = cuda.local.array(4, float32)
    for k in range(4):
        acc[k] = weights[k] * 2
    i = cuda.grid(1)
    out[i] = acc[0] + acc[1] + acc[2] + acc[3] + i


@cuda.jit(device=True)
def barrier_then_read(buf, t, n):
    cuda.syncthreads()
    return buf[(t + 1) % n]


@cuda.jit
def rotate_via_device_barrier(a, out):
    buf = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    buf[t] = a[t]
    out[t] = barrier_then_read(buf, t, cuda.blockDim.x)


@cuda.jit
def barrier_predicates(a, out):
    t = cuda.threadIdx.x
    count = cuda.syncthreads_count(a[t] > 0)
    both = cuda.syncthreads_and(a[t] > 0)
    either = cuda.syncthreads_or(a[t] > 0)
    if t == 0:
        out[0] = count
        out[1] = both
        out[2] = either


@cuda.jit
def atomics(values, out):
    i = cuda.grid(1)
    v = values[i]
    cuda.atomic.add(out, 0, v)
    cuda.atomic.sub(out, 1, v)
    cuda.atomic.max(out, 2, v)
    cuda.atomic.min(out, 3, v)
    cuda.atomic.inc(out, 4, 5)
    cuda.atomic.dec(out, 5, 100)
    cuda.atomic.exch(out, 6, 7)
    cuda.atomic.cas(out, 7, 0, i + 1)


@cuda.jit
def math_and_types(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.sqrt(x[i]) + math.exp(float32(0.5) * x[i]) + numba.float32(math.floor(x[i]))


@cuda.jit
def warp_reduce_shfl(a, out):
    i = cuda.grid(1)
    v = a[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // cuda.warpsize] = v


@cuda.jit
def warp_scan_shfl_up(a, out):
    i = cuda.grid(1)
    v = a[i]
    lane = cuda.laneid
    offset = 1
    while offset < WARP:
        other = cuda.shfl_up_sync(0xFFFFFFFF, v, offset)
        if lane >= offset:
            v += other
        offset *= 2
    out[i] = v


@cuda.jit
def warp_misc(a, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = a[i]
    out[i, 0] = cuda.shfl_sync(0xFFFFFFFF, v, 3)
    out[i, 1] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 1)
    out[i, 2] = cuda.ballot_sync(0xFFFFFFFF, v > 0)
    out[i, 3] = cuda.all_sync(0xFFFFFFFF, v > 0)
    out[i, 4] = cuda.any_sync(0xFFFFFFFF, v > 0)
    out[i, 5] = cuda.activemask()
    out[i, 6] = lane


@cuda.jit
def warp_reduce_shared_syncwarp(a, out):
    buf = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    buf[t] = a[t]
    cuda.syncwarp()
    offset = 16
    while offset > 0:
        if t < offset:
            buf[t] += buf[t + offset]
        cuda.syncwarp()
        offset //= 2
    if t == 0:
        out[0] = buf[0]


@cuda.jit
def warp_reduce_shared_no_syncwarp(a, out):
    buf = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    buf[t] = a[t]
    cuda.syncwarp()
    offset = 16
    while offset > 0:
        if t < offset:
            buf[t] += buf[t + offset]
        offset //= 2
    if t == 0:
        out[0] = buf[0]


@cuda.jit
def shfl_after_early_return(a, out, n):
    i = cuda.grid(1)
    if i >= n:
        return
    out[i] = cuda.shfl_down_sync(0xFFFFFFFF, a[i], 1)


@cuda.jit
def copy_coalesced(src, dst):
    i = cuda.grid(1)
    dst[i] = src[i]


@cuda.jit
def copy_strided(src, dst):
    """Thread i copies row i of a column: neighbouring threads read a whole row apart."""
    i = cuda.grid(1)
    dst[i, 0] = src[i, 0]


def make_transpose_tile(pad):
    """Read a 32x32 float tile by columns from shared memory; pad=1 removes the bank conflicts."""

    @cuda.jit
    def transpose_tile(src, dst):
        tile = cuda.shared.array((32, 32 + pad), float32)
        x = cuda.threadIdx.x
        y = cuda.threadIdx.y
        tile[y, x] = src[y, x]
        cuda.syncthreads()
        dst[y, x] = tile[x, y]

    return transpose_tile


@cuda.jit
def divide_by_zero(a):
    i = cuda.grid(1)
    a[i] = 1 // (i - 3)


@cuda.jit
def spin_forever(a):
    while a[0] == 0:
        pass


@cuda.jit
def big_shared(a):
    buf = cuda.shared.array(13000, float32)
    buf[0] = 1.0
    a[0] = buf[0]


def plain_copy(a, out):
    """A plain Python function that uses the cuda API (no @cuda.jit)."""
    i = cuda.grid(1)
    out[i] = a[i]


@cuda.jit
def different_barriers(a):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    a[t] = t


@cuda.jit
def dynamic_uninitialized(out):
    buf = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    out[t] = buf[t]
