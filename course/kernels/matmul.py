"""Matrix multiplication C = A @ B (float32, row-major) in Numba CUDA, version by version.

Each version is one function or one *kernel factory*; its docstring says what it changes and why.

1. ``matmul_naive``              one thread per output, every operand read from global memory.
2. ``matmul_tiled16``            16x16 tiles staged in *static* shared memory.
3. ``matmul_tiled_dynamic``      the same algorithm with *dynamic* shared memory and a run-time tile width.
4. ``make_tiled_matmul(TILE)``   back to compile-time sizes, made by a factory that closes over TILE.
5. ``make_coarsened_matmul``     thread coarsening: each thread computes COARSE outputs of one column.
6. ``make_regtile_matmul_local`` 2-D register tiling (TM x TN outputs per thread) with ``cuda.local.array``.
7. ``make_regtile_matmul``       the same algorithm, generated as straight-line code (scalars, no arrays);
                                 ``prefetch=True`` adds register double buffering of the global loads.
8. ``make_regtile_matmul_vec``   16-byte shared-memory loads (runs of 4 per thread, A stored transposed);
                                 ``UNROLL=2`` issues the next k step's loads before this step's FMAs;
                                 ``double_buffer=True`` gives it version 9's two shared buffers.
9. ``make_double_buffered_matmul(TILE)``  version 4 with two shared buffers per operand: the next tile loads
                                 while this one is multiplied, one barrier per tile instead of two.
17. ``make_warptile_matmul``     version 12 with warp tiles and indices the compiler knows are >= 0
                                 (13-16 are the tensor-core rungs, in tensorcore.py).

Sizes: the tiled kernels assume M, N, K are multiples of their tile sizes (the benchmark uses 4096);
``matmul_naive`` handles any size.
"""

import hashlib
import math

from numba import config, cuda, float32

# ---------------------------------------------------------------------------------------------------------
# 1. naive
# ---------------------------------------------------------------------------------------------------------


@cuda.jit
def matmul_naive(A, B, C):
    """One thread per output element C[row, col].

    Each thread reads a whole row of A and a whole column of B from global memory: 2K loads for 2K flops.
    ``col`` comes from the x index so that the 32 threads of a warp touch 32 neighbouring columns:
    their loads of B[k, col] and their stores of C[row, col] are coalesced, and A[row, k] is one broadcast.
    """
    col, row = cuda.grid(2)  # x -> column, y -> row
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def launch_naive(A, B, C, block=(16, 16)):
    grid = (math.ceil(C.shape[1] / block[0]), math.ceil(C.shape[0] / block[1]))
    matmul_naive[grid, block](A, B, C)


# ---------------------------------------------------------------------------------------------------------
# 2. shared-memory tiles, static
# ---------------------------------------------------------------------------------------------------------

TILE = 16


@cuda.jit
def matmul_tiled16(A, B, C):
    """16x16 tiles of A and B staged in static shared memory.

    The block's 256 threads load one TILE x TILE tile of A and one of B (one element each, coalesced),
    wait at a barrier, and then each thread reads TILE values of each tile from shared memory.  Every global
    element is now loaded once per block instead of once per thread: TILE times less global traffic.
    The second barrier keeps a fast thread from overwriting a tile that a slow one is still reading.
    TILE is a module-level constant, so the compiler knows it: the shared arrays have a fixed size and the
    inner loop has a fixed trip count (it can be unrolled).
    """
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for k0 in range(0, A.shape[1], TILE):
        sA[ty, tx] = A[row, k0 + tx]
        sB[ty, tx] = B[k0 + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[row, col] = acc


def launch_tiled16(A, B, C):
    matmul_tiled16[(C.shape[1] // TILE, C.shape[0] // TILE), (TILE, TILE)](A, B, C)


# ---------------------------------------------------------------------------------------------------------
# 3. shared-memory tiles, dynamic size
# ---------------------------------------------------------------------------------------------------------


@cuda.jit
def matmul_tiled_dynamic(A, B, C, t):
    """The same algorithm with *dynamic* shared memory and a run-time tile width ``t``.

    ``cuda.shared.array(0, float32)`` is sized at launch (4th launch parameter, in bytes); both tiles live in
    one flat buffer, so every access computes ``ty * t + k`` with a run-time ``t``.  Nothing is known when
    the kernel is compiled: the inner loop cannot be unrolled, and each shared-memory address needs integer
    multiplies at run time.  This is the lesson's "static vs dynamic mystery": same flops, same bytes, a
    several-times slower kernel, because the loop now runs as many integer instructions as float ones.
    """
    smem = cuda.shared.array(0, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * t + ty
    col = cuda.blockIdx.x * t + tx
    off_b = t * t  # sB starts after sA in the flat buffer
    acc = float32(0.0)
    for k0 in range(0, A.shape[1], t):
        smem[ty * t + tx] = A[row, k0 + tx]
        smem[off_b + ty * t + tx] = B[k0 + ty, col]
        cuda.syncthreads()
        for k in range(t):
            acc += smem[ty * t + k] * smem[off_b + k * t + tx]
        cuda.syncthreads()
    C[row, col] = acc


def launch_tiled_dynamic(A, B, C, t=16):
    nbytes = 2 * t * t * 4
    matmul_tiled_dynamic[(C.shape[1] // t, C.shape[0] // t), (t, t), 0, nbytes](A, B, C, t)


# ---------------------------------------------------------------------------------------------------------
# 4. kernel factory: compile-time tile width
# ---------------------------------------------------------------------------------------------------------


def make_tiled_matmul(TILE):
    """Version 2 again, but TILE is chosen by the caller and still known at compile time.

    The factory's inner function closes over TILE; Numba treats a closure variable as a constant, so each
    call ``make_tiled_matmul(32)`` compiles a kernel specialised for that width (fixed-size shared arrays,
    unrollable inner loop).  This recovers version 2's speed with version 3's flexibility.
    """

    @cuda.jit
    def kernel(A, B, C):
        sA = cuda.shared.array((TILE, TILE), float32)
        sB = cuda.shared.array((TILE, TILE), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * TILE + ty
        col = cuda.blockIdx.x * TILE + tx
        acc = float32(0.0)
        for k0 in range(0, A.shape[1], TILE):
            sA[ty, tx] = A[row, k0 + tx]
            sB[ty, tx] = B[k0 + ty, col]
            cuda.syncthreads()
            for k in range(TILE):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()
        C[row, col] = acc

    def launch(A, B, C):
        kernel[(C.shape[1] // TILE, C.shape[0] // TILE), (TILE, TILE)](A, B, C)

    launch.kernel = kernel
    return launch


# ---------------------------------------------------------------------------------------------------------
# 5. thread coarsening
# ---------------------------------------------------------------------------------------------------------


def make_coarsened_matmul(TILE, COARSE):
    """Thread coarsening: each thread computes COARSE outputs C[row + TILE*c, col] of one column.

    In version 4 every product needs two shared-memory loads (sA[ty, k] and sB[k, tx]).  Here a block
    covers a (COARSE*TILE) x TILE patch of C; each thread loads sB[k, tx] once into a register and reuses it
    for its COARSE rows: (COARSE + 1) loads for COARSE products.  The COARSE accumulators live in a
    ``cuda.local.array``; indexed only by loops of compile-time length, they can stay in registers.
    """
    BM = TILE * COARSE

    @cuda.jit
    def kernel(A, B, C):
        sA = cuda.shared.array((BM, TILE), float32)
        sB = cuda.shared.array((TILE, TILE), float32)
        acc = cuda.local.array(COARSE, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row0 = cuda.blockIdx.y * BM
        col = cuda.blockIdx.x * TILE + tx
        for c in range(COARSE):
            acc[c] = 0.0
        for k0 in range(0, A.shape[1], TILE):
            for c in range(COARSE):
                sA[ty + TILE * c, tx] = A[row0 + ty + TILE * c, k0 + tx]
            sB[ty, tx] = B[k0 + ty, col]
            cuda.syncthreads()
            for k in range(TILE):
                b = sB[k, tx]
                for c in range(COARSE):
                    acc[c] += sA[ty + TILE * c, k] * b
            cuda.syncthreads()
        for c in range(COARSE):
            C[row0 + ty + TILE * c, col] = acc[c]

    def launch(A, B, C):
        kernel[(C.shape[1] // TILE, C.shape[0] // BM), (TILE, TILE)](A, B, C)

    launch.kernel = kernel
    return launch


# ---------------------------------------------------------------------------------------------------------
# 6. 2-D register tiling with local arrays
# ---------------------------------------------------------------------------------------------------------


def make_regtile_matmul_local(BM, BN, BK, TM, TN):
    """2-D register tiling: a block computes a BM x BN tile of C, each thread a TM x TN sub-tile.

    Per step k of the inner loop a thread loads TM values of A and TN values of B into registers and does
    TM*TN multiply-adds with them (an outer product): TM+TN shared-memory loads for TM*TN flops pairs,
    e.g. 16 loads for 64 FMAs at 8x8, against 2 loads per FMA in version 4.

    Thread (ty, tx) owns rows ty + TY*i and columns tx + TX*j (strided, not contiguous): then the 16
    threads of a half-warp read 16 *consecutive* words of sB (no bank conflict) and the two rows of sA that
    a warp reads are a broadcast each.  Tiles are loaded with consecutive threads on consecutive addresses
    (coalesced) by all threads together.

    The accumulators are a ``cuda.local.array((TM, TN))``.  They stay in registers only if the compiler
    fully unrolls every loop that indexes them; if it does not, the array lives in (slow) local memory.
    The benchmark prints the registers and local memory per thread that the compiler chose (with
    numba-cuda 0.30.4 at 8x8: 168 registers, 0 bytes of local memory -- the loops were unrolled).
    """
    TX = BN // TN
    TY = BM // TM
    NT = TX * TY
    assert BM % TM == 0 and BN % TN == 0 and (BM * BK) % NT == 0 and (BK * BN) % NT == 0

    @cuda.jit
    def kernel(A, B, C):
        sA = cuda.shared.array((BM, BK), float32)
        sB = cuda.shared.array((BK, BN), float32)
        acc = cuda.local.array((TM, TN), float32)
        a = cuda.local.array(TM, float32)
        b = cuda.local.array(TN, float32)
        tid = cuda.threadIdx.x
        tx = tid % TX
        ty = tid // TX
        row0 = cuda.blockIdx.y * BM
        col0 = cuda.blockIdx.x * BN
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = 0.0
        for k0 in range(0, A.shape[1], BK):
            for p in range((BM * BK) // NT):
                idx = tid + NT * p
                sA[idx // BK, idx % BK] = A[row0 + idx // BK, k0 + idx % BK]
            for p in range((BK * BN) // NT):
                idx = tid + NT * p
                sB[idx // BN, idx % BN] = B[k0 + idx // BN, col0 + idx % BN]
            cuda.syncthreads()
            for k in range(BK):
                for i in range(TM):
                    a[i] = sA[ty + TY * i, k]
                for j in range(TN):
                    b[j] = sB[k, tx + TX * j]
                for i in range(TM):
                    for j in range(TN):
                        acc[i, j] += a[i] * b[j]
            cuda.syncthreads()
        for i in range(TM):
            for j in range(TN):
                C[row0 + ty + TY * i, col0 + tx + TX * j] = acc[i, j]

    def launch(A, B, C):
        kernel[(C.shape[1] // BN, C.shape[0] // BM), NT](A, B, C)

    launch.kernel = kernel
    return launch


# ---------------------------------------------------------------------------------------------------------
# 7. 2-D register tiling, generated straight-line code
# ---------------------------------------------------------------------------------------------------------


def compile_source(src, name, constants):
    """exec() generated kernel source and return the (not yet jitted) Python function named ``name``.

    The generated text is ordinary Numba code; ``constants`` become its globals, so Numba sees them as
    compile-time constants exactly as it sees a factory's closure variables.
    """
    namespace = {"cuda": cuda, "float32": float32, "math": math, **constants}
    filename = f"<generated {name} {hashlib.sha1(src.encode()).hexdigest()[:8]}>"  # one file name per text
    exec(compile(src, filename, "exec"), namespace)
    fn = namespace[name]
    fn.generated_source = src
    return fn


def _unrolled(lines, indent):
    pad = " " * indent
    return "\n".join(pad + line for line in lines)


def make_regtile_matmul(BM=128, BN=128, BK=8, TM=8, TN=8, prefetch=False, max_registers=None):
    """Version 6's algorithm, written out by Python as straight-line code: no arrays, only scalars.

    Rather than trusting the compiler to unroll loops and turn ``acc[i, j]`` into registers, the factory
    *generates the unrolled source text* (``c_3_5 += a_3 * b_5`` ...) and compiles it with exec.  Named
    scalar variables always become registers, so the only limit left is the register file.  Print
    ``launch.kernel.py_func.generated_source`` to see the code.

    ``prefetch=True`` adds register double buffering: the global loads of the *next* tiles are issued
    before the arithmetic on the current ones and stored to shared memory only after it, so their latency
    hides behind the FMAs instead of stalling every warp at the top of each iteration.
    ``max_registers`` caps registers per thread (more resident blocks per SM, at the risk of spills); the CPU
    simulator has no registers and ignores it.
    """
    TX = BN // TN
    TY = BM // TM
    NT = TX * TY
    LA = (BM * BK) // NT  # elements of the A tile each thread loads
    LB = (BK * BN) // NT
    assert BM % TM == 0 and BN % TN == 0 and LA * NT == BM * BK and LB * NT == BK * BN
    assert NT % BK == 0 and NT % BN == 0
    RI, RJ = range(TM), range(TN)
    src = ["def regtile_matmul(A, B, C):"]
    body = [
        "sA = cuda.shared.array((BM, BK), float32)",
        "sB = cuda.shared.array((BK, BN), float32)",
        "tid = cuda.threadIdx.x",
        "tx = tid % TX",
        "ty = tid // TX",
        "row0 = cuda.blockIdx.y * BM",
        "col0 = cuda.blockIdx.x * BN",
        "K = A.shape[1]",
    ]
    body += [f"c_{i}_{j} = float32(0.0)" for i in RI for j in RJ]
    # Tile loads: element p of this thread's share is row ra + (NT // BK) * p, column ka of the A tile
    # (row kb + (NT // BN) * p, column cb of the B tile).  Consecutive threads -> consecutive addresses.
    body += ["ra = tid // BK", "ka = tid % BK", "kb = tid // BN", "cb = tid % BN"]
    load_a = [f"ga{p} = A[row0 + ra + {(NT // BK) * p}, k0 + ka]" for p in range(LA)]
    load_b = [f"gb{p} = B[k0 + kb + {(NT // BN) * p}, col0 + cb]" for p in range(LB)]
    store = [f"sA[ra + {(NT // BK) * p}, ka] = ga{p}" for p in range(LA)]
    store += [f"sB[kb + {(NT // BN) * p}, cb] = gb{p}" for p in range(LB)]
    inner = ["for k in range(BK):"]
    inner += [f"    a_{i} = sA[ty + {TY * i}, k]" for i in RI]
    inner += [f"    b_{j} = sB[k, tx + {TX * j}]" for j in RJ]
    inner += [f"    c_{i}_{j} += a_{i} * b_{j}" for i in RI for j in RJ]
    if not prefetch:
        body += ["for k0 in range(0, K, BK):"]
        body += ["    " + s for s in load_a + load_b + store]
        body += ["    cuda.syncthreads()"]
        body += ["    " + s for s in inner]
        body += ["    cuda.syncthreads()"]
    else:
        body += ["k0 = 0"] + load_a + load_b + store + ["cuda.syncthreads()"]
        body += ["for k0 in range(BK, K + BK, BK):"]
        body += ["    if k0 < K:"]
        body += ["        " + s for s in load_a + load_b]
        body += ["    " + s for s in inner]
        body += ["    cuda.syncthreads()", "    if k0 < K:"]
        body += ["        " + s for s in store]
        body += ["    cuda.syncthreads()"]
    body += [f"C[row0 + ty + {TY * i}, col0 + tx + {TX * j}] = c_{i}_{j}" for i in RI for j in RJ]
    src = "\n".join(src) + "\n" + _unrolled(body, 4) + "\n"
    consts = dict(BM=BM, BN=BN, BK=BK, TX=TX)
    opts = {} if max_registers is None or config.ENABLE_CUDASIM else {"max_registers": max_registers}
    kernel = cuda.jit(compile_source(src, "regtile_matmul", consts), **opts)

    def launch(A, B, C):
        kernel[(C.shape[1] // BN, C.shape[0] // BM), NT](A, B, C)

    launch.kernel = kernel
    launch.source = src
    return launch


# ---------------------------------------------------------------------------------------------------------
# 8. register tiling with 16-byte shared-memory loads
# ---------------------------------------------------------------------------------------------------------


def make_regtile_matmul_vec(BM=128, BN=128, BK=8, TM=8, TN=8, prefetch=True, max_registers=None, UNROLL=1,
                            double_buffer=False):
    """Version 7 with fewer, wider shared-memory loads: each thread's operands come in runs of 4 floats.

    Version 7 issues TM + TN = 16 four-byte shared loads per 64 FMAs.  A multiprocessor serves about one
    warp-wide shared load per clock but issues four warp FMAs per clock, so at 16 loads per 64 FMAs the
    load pipe is full when the FMA pipe is only half busy: version 7 stalls near half of cuBLAS.
    Here a thread owns rows ``4*ty + i`` (+ multiples of 4*TY) and columns ``4*tx + j`` (+ multiples of
    4*TX), i, j < 4.  Its 4 values of A at one k are then 4 consecutive floats -- *if* the A tile is stored
    transposed, sA[k, m] -- and its 4 values of B too.  When the compiler can prove the address is 16-byte
    aligned, it merges the 4 loads into one 16-byte load (``ld.shared.v4.f32``): 4 loads per 64 FMAs.
    Alignment: the shared arrays are declared ``alignment=16`` (not supported by the CPU simulator, so it
    is left out there), and sA's rows are padded from BM to BM + 4 floats -- a multiple of 4, so each row
    starts 16-byte aligned, and an odd multiple of 4 words, so that the transposing stores of a warp
    (8 k values x 4 m values) land in 32 different banks.
    ``prefetch=True``: register double buffering of the global loads, as in version 7.
    ``UNROLL=2``: the k loop written two steps at a time, loads first (shared-load latency overlaps FMAs).
    ``double_buffer=True`` (with prefetch): two shared buffers per operand, as in version 9. Step k multiplies
    one buffer and stores the prefetched tile k + 1 into the other, so one barrier per step is enough instead
    of two. The k loop is written two steps at a time, so that every shared address stays a compile-time
    offset (buffers 0 and 1 are separate arrays).
    """
    TX, TY = BN // TN, BM // TM
    NT = TX * TY
    LA, LB = (BM * BK) // NT, (BK * BN) // NT
    assert TM % 4 == 0 and TN % 4 == 0 and LA * NT == BM * BK and LB * NT == BK * BN
    assert NT % BK == 0 and NT % BN == 0 and TX & (TX - 1) == 0
    PAD = BM + 4
    align = "" if config.ENABLE_CUDASIM else ", alignment=16"
    # row (column) owned by register index i (j): chunks of 4 consecutive, chunk c offset by c*4*TY (c*4*TX)
    rows = [f"{(i // 4) * 4 * TY + i % 4}" for i in range(TM)]
    cols = [f"{(j // 4) * 4 * TX + j % 4}" for j in range(TN)]
    RI, RJ = range(TM), range(TN)
    body = [
        f"sA = cuda.shared.array((BK, PAD), float32{align})  # A tile, transposed: sA[k, m]",
        f"sB = cuda.shared.array((BK, BN), float32{align})",
        "tid = cuda.threadIdx.x",
        "tx4 = (tid & (TX - 1)) * 4  # = (tid % TX) * 4, but visibly >= 0 to the compiler",
        "ty4 = (tid // TX) * 4",
        "row0 = cuda.blockIdx.y * BM",
        "col0 = cuda.blockIdx.x * BN",
        "K = A.shape[1]",
        "ra = tid // BK",
        "ka = tid % BK",
        "kb = tid // BN",
        "cb = tid % BN",
    ]
    body += [f"c_{i}_{j} = float32(0.0)" for i in RI for j in RJ]
    load_a = [f"ga{p} = A[row0 + ra + {(NT // BK) * p}, k0 + ka]" for p in range(LA)]
    load_b = [f"gb{p} = B[k0 + kb + {(NT // BN) * p}, col0 + cb]" for p in range(LB)]
    store = [f"sA[ka, ra + {(NT // BK) * p}] = ga{p}" for p in range(LA)]
    store += [f"sB[kb + {(NT // BN) * p}, cb] = gb{p}" for p in range(LB)]
    inner = [f"for k in range(0, BK, {UNROLL}):"]
    for u in range(UNROLL):  # loads of all UNROLL steps first, so they overlap the FMAs
        inner += [f"    a_{i}_{u} = sA[k + {u}, ty4 + {rows[i]}]" for i in RI]
        inner += [f"    b_{j}_{u} = sB[k + {u}, tx4 + {cols[j]}]" for j in RJ]
    for u in range(UNROLL):
        inner += [f"    c_{i}_{j} += a_{i}_{u} * b_{j}_{u}" for i in RI for j in RJ]
    if double_buffer:
        assert prefetch, "double_buffer=True needs prefetch=True"
        body = _double_buffered_steps(body, load_a + load_b, store, inner)
    elif not prefetch:
        body += ["for k0 in range(0, K, BK):"]
        body += ["    " + s for s in load_a + load_b + store]
        body += ["    cuda.syncthreads()"] + ["    " + s for s in inner] + ["    cuda.syncthreads()"]
    else:
        body += ["k0 = 0"] + load_a + load_b + store + ["cuda.syncthreads()"]
        body += ["for k0 in range(BK, K + BK, BK):", "    if k0 < K:"]
        body += ["        " + s for s in load_a + load_b]
        body += ["    " + s for s in inner]
        body += ["    cuda.syncthreads()", "    if k0 < K:"]
        body += ["        " + s for s in store]
        body += ["    cuda.syncthreads()"]
    body += [f"C[row0 + ty4 + {rows[i]}, col0 + tx4 + {cols[j]}] = c_{i}_{j}" for i in RI for j in RJ]
    src = "def regtile_matmul_vec(A, B, C):\n" + _unrolled(body, 4) + "\n"
    consts = dict(BK=BK, BN=BN, BM=BM, PAD=PAD, TX=TX)
    opts = {} if max_registers is None or config.ENABLE_CUDASIM else {"max_registers": max_registers}
    kernel = cuda.jit(compile_source(src, "regtile_matmul_vec", consts), **opts)

    def launch(A, B, C):
        kernel[(C.shape[1] // BN, C.shape[0] // BM), NT](A, B, C)

    launch.kernel = kernel
    launch.source = src
    return launch


def _double_buffered_steps(body, loads, store, inner):
    """Version 8's k loop with two shared buffers (sA0/sB0, sA1/sB1): two steps per iteration, each
    multiplying one buffer while it stores the prefetched next tile into the other, one barrier per step."""

    def on(buffer, lines):
        return [line.replace("sA[", f"sA{buffer}[").replace("sB[", f"sB{buffer}[") for line in lines]

    declarations = [line for line in body if "cuda.shared.array" in line]
    body = [line for line in body if "cuda.shared.array" not in line]
    for buffer in (0, 1):
        body += [line.replace("sA =", f"sA{buffer} =").replace("sB =", f"sB{buffer} =")
                 for line in declarations]
    body += ["k0 = 0"] + loads + on(0, store) + ["cuda.syncthreads()"]
    body += ["for kk in range(0, K, 2 * BK):"]
    for this, other, ahead in ((0, 1, "BK"), (1, 0, "2 * BK")):
        step = ["k0 = kk + " + ahead, "if k0 < K:"] + ["    " + s for s in loads]
        step += on(this, inner) + ["if k0 < K:"] + ["    " + s for s in on(other, store)]
        if this == 1:  # the second step of a pair exists only if its tile does
            step = ["if kk + BK < K:"] + ["    " + s for s in step]
        body += ["    " + s for s in step] + ["    cuda.syncthreads()"]
    return body


# ---------------------------------------------------------------------------------------------------------
# 9. double buffering in shared memory
# ---------------------------------------------------------------------------------------------------------


def make_double_buffered_matmul(TILE):
    """Version 4 with two shared buffers per operand and one barrier per tile instead of two.

    In step t the block multiplies tile t from buffer t % 2 and loads tile t + 1 into the other buffer. The
    barrier at the end of the step does both jobs of version 4's two barriers: tile t + 1 is complete before
    anyone reads it, and nobody writes buffer t % 2 again (in step t + 1) before everyone has finished
    reading it (in step t). A block goes through cdiv(K, TILE) + 1 barriers instead of 2 * cdiv(K, TILE).

    Each thread reads its elements of tile t + 1 from global memory into registers *before* its multiply-adds
    and stores them into shared memory *after*: a warp does not wait for a global load until it uses the
    value, so the load's latency hides behind the arithmetic. The copy still passes through the thread's
    registers; CUDA's asynchronous copies move tiles from global to shared memory without them (cp.async,
    which Numba reaches by linking it: course/kernels/tensorcore.py; and Hopper's TMA, which signals each
    tile's arrival on a barrier object).
    """

    @cuda.jit
    def kernel(A, B, C):
        sA = cuda.shared.array((2, TILE, TILE), float32)
        sB = cuda.shared.array((2, TILE, TILE), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * TILE + ty
        col = cuda.blockIdx.x * TILE + tx
        tiles = A.shape[1] // TILE
        sA[0, ty, tx] = A[row, tx]
        sB[0, ty, tx] = B[ty, col]
        cuda.syncthreads()
        acc = float32(0.0)
        a_next = float32(0.0)
        b_next = float32(0.0)
        for t in range(tiles):
            this = t % 2
            if t + 1 < tiles:
                a_next = A[row, (t + 1) * TILE + tx]
                b_next = B[(t + 1) * TILE + ty, col]
            for k in range(TILE):
                acc += sA[this, ty, k] * sB[this, k, tx]
            if t + 1 < tiles:
                sA[1 - this, ty, tx] = a_next
                sB[1 - this, ty, tx] = b_next
            cuda.syncthreads()
        C[row, col] = acc

    def launch(A, B, C):
        kernel[(C.shape[1] // TILE, C.shape[0] // TILE), (TILE, TILE)](A, B, C)

    launch.kernel = kernel
    return launch


# ---------------------------------------------------------------------------------------------------------
# 17. warp tiles (the fp32 ladder's next rung; 13-16 are the tensor-core rungs in tensorcore.py)
# ---------------------------------------------------------------------------------------------------------


def make_warptile_matmul(BM=128, BN=128, BK=8, WM=64, WN=32, TM=8, TN=8, double_buffer=True, UNROLL=2,
                         max_registers=128, pipelined=False):
    """Version 12 with each warp owning one WM x WN rectangle of the block's tile (a *warp tile*).

    Versions 8-12 spread a thread's 4x4 sub-tiles over the whole block tile: the 32 threads of a warp read
    2 distinct runs of A and 16 of B per k (256 bytes of B: two shared-memory wavefronts). Here the warps
    split the block tile into WM x WN pieces, and a warp's lanes form an LM x LN grid inside its piece
    (LM = WM // TM, LN = WN // TN, LM * LN = 32): lane (tm, tn) owns rows ``tm*4 + i`` (+ multiples of
    4*LM) and columns ``tn*4 + j`` (+ multiples of 4*LN). A warp then reads 8 runs of A and 4 of B per k,
    each one wavefront. Every index is built with shifts and masks (sizes are powers of two), so Numba sees
    non-negative indices and adds no wraparound selects. The k loop is version 12's: the next tile's global
    loads go to registers before this step's FMAs, two shared buffers, one barrier per step.
    ``pipelined=True`` writes the k loop of a step out in full (no loop left for the compiler to keep), with
    two fragment sets in turn: the shared loads of k + 1 come before the FMAs of k.
    Measured best on the H200 (bench/NOTES.md): BM=256, WM=WN=64, TM=16, pipelined, no register cap
    (207 registers, one block of 8 warps per SM).
    """
    LM, LN = WM // TM, WN // TN
    WARPS_N = BN // WN
    NT = (BM // WM) * WARPS_N * 32
    LA, LB = (BM * BK) // NT, (BK * BN) // NT
    assert LM * LN == 32 and TM % 4 == 0 and TN % 4 == 0 and BM % WM == 0 and BN % WN == 0
    assert LA * NT == BM * BK and LB * NT == BK * BN and NT % BK == 0 and NT % BN == 0
    for size in (BK, BN, LN, WARPS_N):
        assert size & (size - 1) == 0, "sizes used as masks must be powers of two"
    PAD = BM + 4
    align = "" if config.ENABLE_CUDASIM else ", alignment=16"
    rows = [f"{(i // 4) * 4 * LM + i % 4}" for i in range(TM)]
    cols = [f"{(j // 4) * 4 * LN + j % 4}" for j in range(TN)]
    RI, RJ = range(TM), range(TN)
    log = {n: n.bit_length() - 1 for n in (BK, BN, LN, WARPS_N)}
    body = [
        f"sA = cuda.shared.array((BK, PAD), float32{align})  # A tile, transposed: sA[k, m]",
        f"sB = cuda.shared.array((BK, BN), float32{align})",
        "tid = cuda.threadIdx.x & 1023  # the masks tell the compiler that every index is >= 0",
        "lane = tid & 31",
        "warp = tid >> 5",
        f"ar = (warp >> {log[WARPS_N]}) * WM + (lane >> {log[LN]}) * 4  # first row this thread reads",
        f"bc = (warp & {WARPS_N - 1}) * WN + (lane & {LN - 1}) * 4  # first column",
        "row0 = (cuda.blockIdx.y & 65535) * BM",
        "col0 = (cuda.blockIdx.x & 0x7FFFFFFF) * BN",
        "K = A.shape[1]",
        f"ra = tid >> {log[BK]}",
        f"ka = tid & {BK - 1}",
        f"kb = tid >> {log[BN]}",
        f"cb = tid & {BN - 1}",
    ]
    body += [f"c_{i}_{j} = float32(0.0)" for i in RI for j in RJ]
    load_a = ["kq = k0 & 0x7FFFFFFF"]  # k0 >= 0, said so that no load index needs a wraparound select
    load_a += [f"ga{p} = A[row0 + ra + {(NT // BK) * p}, kq + ka]" for p in range(LA)]
    load_b = [f"gb{p} = B[kq + kb + {(NT // BN) * p}, col0 + cb]" for p in range(LB)]
    store = [f"sA[ka, ra + {(NT // BK) * p}] = ga{p}" for p in range(LA)]
    store += [f"sB[kb + {(NT // BN) * p}, cb] = gb{p}" for p in range(LB)]
    def fragments(k, u, indent=""):
        return ([f"{indent}a_{i}_{u} = sA[{k}, ar + {rows[i]}]" for i in RI]
                + [f"{indent}b_{j}_{u} = sB[{k}, bc + {cols[j]}]" for j in RJ])

    def fmas(u, indent=""):
        return [f"{indent}c_{i}_{j} += a_{i}_{u} * b_{j}_{u}" for i in RI for j in RJ]

    if pipelined:
        inner = fragments(0, 0)
        for k in range(BK):
            inner += (fragments(k + 1, (k + 1) % 2) if k + 1 < BK else []) + fmas(k % 2)
    else:
        inner = [f"for k in range(0, BK, {UNROLL}):"]
        for u in range(UNROLL):
            inner += fragments(f"k + {u}", u, "    ")
        for u in range(UNROLL):
            inner += fmas(u, "    ")
    if double_buffer:
        body = _double_buffered_steps(body, load_a + load_b, store, inner)
    else:
        body += ["k0 = 0"] + load_a + load_b + store + ["cuda.syncthreads()"]
        body += ["for k0 in range(BK, K + BK, BK):", "    if k0 < K:"]
        body += ["        " + s for s in load_a + load_b]
        body += ["    " + s for s in inner]
        body += ["    cuda.syncthreads()", "    if k0 < K:"]
        body += ["        " + s for s in store]
        body += ["    cuda.syncthreads()"]
    body += [f"C[row0 + ar + {rows[i]}, col0 + bc + {cols[j]}] = c_{i}_{j}" for i in RI for j in RJ]
    src = "def warptile_matmul(A, B, C):\n" + _unrolled(body, 4) + "\n"
    consts = dict(BK=BK, BN=BN, BM=BM, PAD=PAD, WM=WM, WN=WN)
    opts = {} if max_registers is None or config.ENABLE_CUDASIM else {"max_registers": max_registers}
    kernel = cuda.jit(compile_source(src, "warptile_matmul", consts), **opts)

    def launch(A, B, C):
        kernel[(C.shape[1] // BN, C.shape[0] // BM), NT](A, B, C)

    launch.kernel = kernel
    launch.source = src
    launch.threads = NT
    return launch
