"""FlashAttention forward (float32) in Numba CUDA, version by version.

Inputs Q, K, V are (BH, N, D) C-contiguous float32 arrays (B*H heads flattened); outputs are O (BH, N, D)
and the row logsumexp L (BH, N), natural log, of the scaled scores.  Any CUDA array works, PyTorch
tensors included: Numba reads their ``__cuda_array_interface__`` (no copy), or wrap them once with
``cuda.as_cuda_array(t)``.  No version allocates memory beyond O and L: scores are never stored.

Every version uses the *online softmax*: keep a running row max m and row sum l, and when the max grows
from m to m', rescale what was accumulated by exp(m - m').  Scores are kept in base 2: Q is multiplied
once by scale*log2(e), so exp(x) becomes exp2(x), one hardware instruction.

1. ``make_flash_row``     one thread per query row, K and V read straight from global memory.
2. ``make_flash_smem``    a block of BQ query rows shares each K/V tile through shared memory.
3. ``make_flash_regtile`` several threads per row, register tiles for both products (generated code).
4. ``make_flash_regtile_v4`` 16-byte shared loads, K/V/P in separate buffers (> 48 KiB dynamic shared
   memory), larger per-thread tiles (8x8 at 128 query rows), loads-first unrolling.
6. ``make_flash_v6``      one barrier per key tile instead of four: row max / row sum by warp shuffles, P
   private to each warp (``syncwarp``), K/V double-buffered and fetched during the P V product.
   Needs warp intrinsics: run it on the CPU with gpusim (``bench/check_attention_gpusim.py``), not
   Numba's simulator.
7. ``attention_v7.make_flash_v7`` (its own module) version 6 with the heaviest causal blocks launched first,
   and any N.

Causal versions (``CAUSAL=True``) skip every key tile that lies wholly above the diagonal.
"""

import math
import re

import numpy as np
from numba import config, cuda, float32, uint64

from .matmul import _unrolled, compile_source

LOG2E = float32(1.0 / math.log(2.0))
LN2 = float32(math.log(2.0))
NEG_INF = float32(-math.inf)


def q_scale(D):
    """Factor applied to Q: softmax scale 1/sqrt(D) times log2(e), so that scores are in base 2."""
    return np.float32(LOG2E / math.sqrt(D))


# ---------------------------------------------------------------------------------------------------------
# 1. one thread per query row
# ---------------------------------------------------------------------------------------------------------


def make_flash_row(D, CAUSAL=False):
    """One thread per query row; it streams every key and value row from global memory.

    The thread keeps its (scaled) query row and its output accumulator in two ``cuda.local.array(D)`` and
    walks the keys one by one: score s, then the online-softmax update.  The rescale is *lazy*: only when a
    score beats the running max (rare after the first keys) do we pay the extra exp and D multiplies.
    All threads of a warp read the same K/V row at the same time, so those loads are broadcasts served by
    the caches, but every thread still does D loads per D flops: the kernel is load-bound.
    """

    @cuda.jit
    def kernel(Q, K, V, O, L, qscale):  # noqa: E741
        bh = cuda.blockIdx.y
        qi = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        N = Q.shape[1]
        if qi >= N:
            return
        q = cuda.local.array(D, float32)
        acc = cuda.local.array(D, float32)
        for c in range(D):
            q[c] = Q[bh, qi, c] * qscale
            acc[c] = 0.0
        m = NEG_INF
        ll = float32(0.0)
        kend = qi + 1 if CAUSAL else N  # causal: keys 0..qi only
        for j in range(kend):
            s = float32(0.0)
            for c in range(D):
                s += q[c] * K[bh, j, c]
            if s > m:  # new running max: rescale what we have (lazy rescaling)
                alpha = math.exp2(m - s)
                ll *= alpha
                for c in range(D):
                    acc[c] *= alpha
                m = s
            p = math.exp2(s - m)
            ll += p
            for c in range(D):
                acc[c] += p * V[bh, j, c]
        inv = float32(1.0) / ll
        for c in range(D):
            O[bh, qi, c] = acc[c] * inv
        L[bh, qi] = (m + math.log2(ll)) * LN2

    def launch(Q, K, V, O, L, threads=128):  # noqa: E741
        BH, N, _ = Q.shape
        kernel[((N + threads - 1) // threads, BH), threads](Q, K, V, O, L, q_scale(D))

    launch.kernel = kernel
    return launch


# ---------------------------------------------------------------------------------------------------------
# 2. K/V tiles in shared memory
# ---------------------------------------------------------------------------------------------------------


def make_flash_smem(D, BQ=64, CAUSAL=False):
    """A block of BQ threads (one per query row) loads each BQ x D tile of K and V once into shared memory.

    The block's threads load the tile together, consecutive threads on consecutive addresses (coalesced),
    then every thread reads it BQ times from shared memory instead of from global memory / the caches.
    Two barriers per tile: after the load (nobody reads a half-written tile) and after the reads (nobody
    overwrites a tile that a slower thread is still reading -- a write-after-read race otherwise).
    Causal: the block of rows q0..q0+BQ-1 stops at the diagonal tile, and inside it each row stops at its
    own index; the tiles above the diagonal are never loaded.  Blocks are launched last-row-block first,
    so the longest (most tiles) start first and the short ones fill in at the end.
    """
    BKV = BQ

    @cuda.jit
    def kernel(Q, K, V, O, L, qscale):  # noqa: E741
        sK = cuda.shared.array((BKV, D), float32)
        sV = cuda.shared.array((BKV, D), float32)
        q = cuda.local.array(D, float32)
        acc = cuda.local.array(D, float32)
        tid = cuda.threadIdx.x
        bh = cuda.blockIdx.y
        N = Q.shape[1]
        qb = cuda.gridDim.x - 1 - cuda.blockIdx.x if CAUSAL else cuda.blockIdx.x
        qi = qb * BQ + tid
        for c in range(D):
            q[c] = Q[bh, qi, c] * qscale
            acc[c] = 0.0
        m = NEG_INF
        ll = float32(0.0)
        ntiles = qb + 1 if CAUSAL else N // BKV
        for t in range(ntiles):
            kv0 = t * BKV
            for p in range((BKV * D) // BQ):  # cooperative, coalesced tile load
                idx = tid + BQ * p
                sK[idx // D, idx % D] = K[bh, kv0 + idx // D, idx % D]
                sV[idx // D, idx % D] = V[bh, kv0 + idx // D, idx % D]
            cuda.syncthreads()  # the tile is complete
            jend = BKV
            if CAUSAL and t == ntiles - 1:
                jend = tid + 1  # diagonal tile: keys up to this row's own index
            for j in range(jend):
                s = float32(0.0)
                for c in range(D):
                    s += q[c] * sK[j, c]  # same address for the whole warp: broadcast
                if s > m:
                    alpha = math.exp2(m - s)
                    ll *= alpha
                    for c in range(D):
                        acc[c] *= alpha
                    m = s
                p = math.exp2(s - m)
                ll += p
                for c in range(D):
                    acc[c] += p * sV[j, c]
            cuda.syncthreads()  # everyone has finished reading before the next tile overwrites it
        inv = float32(1.0) / ll
        for c in range(D):
            O[bh, qi, c] = acc[c] * inv
        L[bh, qi] = (m + math.log2(ll)) * LN2

    def launch(Q, K, V, O, L):  # noqa: E741
        BH, N, _ = Q.shape
        assert N % BQ == 0
        kernel[(N // BQ, BH), BQ](Q, K, V, O, L, q_scale(D))

    launch.kernel = kernel
    return launch


# ---------------------------------------------------------------------------------------------------------
# 3. register tiles (generated straight-line code)
# ---------------------------------------------------------------------------------------------------------


def make_flash_regtile(D=64, BQ=64, BKV=64, TX=16, TY=8, CAUSAL=False, max_registers=None):
    """FlashAttention as two register-tiled matrix products per key tile, like the best matmul kernel.

    A block of TX*TY threads owns BQ query rows.  Per key tile of BKV rows:

    1. S = Q K^T (BQ x BKV): thread (ty, tx) computes rows ty + TY*i (RM of them) x key columns tx + TX*j
       (CS of them) as an outer product per d: RM + CS shared loads for RM*CS FMAs, values in registers.
    2. Online softmax on those registers.  A row is spread over the TX threads with the same ty, so the row
       max is reduced through shared memory (each thread writes its partial max, a barrier, each reads the
       TX partials of its rows).  The row *sum* needs no reduction until the very end: each thread keeps
       the partial sum of its own columns, rescaled by the same factors.
    3. P goes to shared memory, V replaces K in the same buffer, and O += P V (BQ x D) is a second
       register-tiled product: thread (ty, tx) owns O rows ty + TY*i x columns tx + TX*j (CO of them).

    Shared memory: Q tile (transposed, so a warp's reads are a broadcast), one K-then-V buffer, P: exactly
    48 KiB at D = BQ = BKV = 64, the static limit, so nothing is padded.  Bank conflicts are avoided by
    XOR *swizzling* instead: K row r is stored with its columns permuted as c ^ (r % 32), so the 16 rows
    that a half-warp reads at one d fall in 16 different banks; P rows alternate c ^ 1 for the same reason.
    The source is generated unrolled (scalars c_i_j, no arrays), as in ``matmul.make_regtile_matmul``;
    ``launch.source`` holds it.  Q's block order is reversed when causal (longest blocks first).
    """
    NT = TX * TY
    RM, CS, CO = BQ // TY, BKV // TX, D // TX
    SW = min(D, 32) - 1
    assert RM * TY == BQ and CS * TX == BKV and CO * TX == D and TY % 2 == 0 and BKV >= TX
    assert (BQ * D) % NT == 0 and (BKV * D) % NT == 0 and (not CAUSAL or BQ == BKV)
    RI, JS, JO = range(RM), range(CS), range(CO)

    def mx(names):  # balanced max() tree
        while len(names) > 1:
            names = [f"max({a}, {b})" for a, b in zip(names[::2], names[1::2], strict=False)] + names[
                len(names) & ~1 :
            ]
        return names[0]

    b = [
        "sQ = cuda.shared.array((D, BQ), float32)  # Q tile, transposed: sQ[d, q]",
        "sKV = cuda.shared.array((BKV, D), float32)  # K tile (swizzled), then the V tile",
        "sP = cuda.shared.array((BQ, BKV), float32)  # P tile (swizzled); scratch for row reductions",
        "tid = cuda.threadIdx.x",
        "tx = tid % TX",
        "ty = tid // TX",
        "par = ty & 1  # parity of every row this thread owns (TY is even)",
        "bh = cuda.blockIdx.y",
        "N = Q.shape[1]",
        "qb = cuda.gridDim.x - 1 - cuda.blockIdx.x" if CAUSAL else "qb = cuda.blockIdx.x",
        "q0 = qb * BQ",
        "for p in range((BQ * D) // NT):  # Q tile, scaled once",
        "    idx = tid + NT * p",
        "    sQ[idx % D, idx // D] = Q[bh, q0 + idx // D, idx % D] * qscale",
    ]
    b += [f"kx{j} = (tx + {TX * j}) & SW  # swizzle of the K rows this thread reads" for j in JS]
    b += [f"m{i} = NEG_INF" for i in RI] + [f"l{i} = float32(0.0)" for i in RI]
    b += [f"o{i}_{j} = float32(0.0)" for i in RI for j in JO]
    b += ["ntiles = qb + 1" if CAUSAL else "ntiles = N // BKV", "for t in range(ntiles):"]
    t = [
        "kv0 = t * BKV",
        "cuda.syncthreads()  # previous tile's P V product is done with sKV and sP",
        "for p in range((BKV * D) // NT):",
        "    idx = tid + NT * p",
        "    r = idx // D",
        "    sKV[r, (idx % D) ^ (r & SW)] = K[bh, kv0 + r, idx % D]",
        "cuda.syncthreads()",
    ]
    t += [f"s{i}_{j} = float32(0.0)" for i in RI for j in JS]
    t += ["for d in range(D):  # S = Q K^T, outer product per d"]
    t += [f"    a{i} = sQ[d, ty + {TY * i}]" for i in RI]
    t += [f"    b{j} = sKV[tx + {TX * j}, d ^ kx{j}]" for j in JS]
    t += [f"    s{i}_{j} += a{i} * b{j}" for i in RI for j in JS]
    if CAUSAL:
        t += ["if t == ntiles - 1:  # diagonal tile: mask keys after the query"]
        t += [f"    if tx + {TX * j} > ty + {TY * i}:\n        s{i}_{j} = NEG_INF" for i in RI for j in JS]
    t += [f"sP[ty + {TY * i}, tx] = {mx([f's{i}_{j}' for j in JS])}  # partial row max" for i in RI]
    t += ["cuda.syncthreads()"]
    for i in RI:
        t += [f"mn{i} = m{i}", "for u in range(TX):", f"    mn{i} = max(mn{i}, sP[ty + {TY * i}, u])"]
    t += ["cuda.syncthreads()  # all partial maxima read, all K reads done"]
    for i in RI:
        t += [f"al{i} = math.exp2(m{i} - mn{i})", f"m{i} = mn{i}", f"l{i} *= al{i}"]
        t += [f"o{i}_{j} *= al{i}" for j in JO]
        for j in JS:
            t += [f"s{i}_{j} = math.exp2(s{i}_{j} - mn{i})", f"l{i} += s{i}_{j}"]
            t += [f"sP[ty + {TY * i}, (tx + {TX * j}) ^ par] = s{i}_{j}"]
    t += [
        "for p in range((BKV * D) // NT):  # V tile, plain layout",
        "    idx = tid + NT * p",
        "    sKV[idx // D, idx % D] = V[bh, kv0 + idx // D, idx % D]",
        "cuda.syncthreads()",
        "for kv in range(BKV):  # O += P V, outer product per key",
        "    kvs = kv ^ par",
    ]
    t += [f"    a{i} = sP[ty + {TY * i}, kvs]" for i in RI]
    t += [f"    b{j} = sKV[kv, tx + {TX * j}]" for j in JO]
    t += [f"    o{i}_{j} += a{i} * b{j}" for i in RI for j in JO]
    b += ["    " + line for line in "\n".join(t).split("\n")]
    b += ["cuda.syncthreads()"] + [f"sP[ty + {TY * i}, tx] = l{i}  # partial row sums" for i in RI]
    b += ["cuda.syncthreads()"]
    for i in RI:
        b += [
            "lt = float32(0.0)",
            "for u in range(TX):",
            f"    lt += sP[ty + {TY * i}, u]",
            "inv = float32(1.0) / lt",
        ]
        b += [f"O[bh, q0 + ty + {TY * i}, tx + {TX * j}] = o{i}_{j} * inv" for j in JO]
        b += ["if tx == 0:", f"    L[bh, q0 + ty + {TY * i}] = (m{i} + math.log2(lt)) * LN2"]
    src = "def flash_regtile(Q, K, V, O, L, qscale):  # noqa: E741\n" + _unrolled(b, 4) + "\n"
    consts = dict(D=D, BQ=BQ, BKV=BKV, TX=TX, NT=NT, SW=SW, NEG_INF=NEG_INF, LN2=LN2)
    opts = {} if max_registers is None else {"max_registers": max_registers}
    kernel = cuda.jit(compile_source(src, "flash_regtile", consts), **opts)

    def launch(Q, K, V, O, L):  # noqa: E741
        BH, N, _ = Q.shape
        assert N % BQ == 0 and N % BKV == 0 and Q.shape[2] == D
        kernel[(N // BQ, BH), NT](Q, K, V, O, L, q_scale(D))

    launch.kernel = kernel
    launch.source = src
    return launch


# ---------------------------------------------------------------------------------------------------------
# 4. register tiles + 16-byte shared loads, K and V in separate buffers (dynamic shared memory)
# ---------------------------------------------------------------------------------------------------------


def set_max_dynamic_shared(dispatcher, args, nbytes):
    """Let a kernel use more than 48 KiB of *dynamic* shared memory.

    A block may use up to 227 KiB of shared memory on Hopper, but only after the program raises the
    kernel's limit (CUDA's ``cudaFuncSetAttribute(..., MaxDynamicSharedMemorySize, n)``).  Numba has no
    keyword for this; we compile the kernel for these argument types and set the attribute through the
    driver API that Numba itself uses.  (Nothing to do under the CPU simulator.)
    """
    if config.ENABLE_CUDASIM or nbytes <= 48 * 1024:
        return
    from numba.cuda.cudadrv.driver import binding, driver

    compiled = dispatcher.compile(tuple(dispatcher.typeof_pyval(a) for a in args))
    cufunc = compiled._codelibrary.get_cufunc()
    attr = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    driver.cuKernelSetAttribute(attr, nbytes, cufunc.handle, cufunc.device.id)


def make_flash_regtile_v4(D=64, BQ=64, BKV=64, TX=16, TY=8, CAUSAL=False, max_registers=None, UNROLL=1):
    """Version 3 rebuilt around 16-byte shared-memory loads, with K, V and P in separate buffers.

    What changes, and why:
    * Version 3 issues one 4-byte shared load per value: RM + CS = 12 loads per 32 FMAs, so the shared
      memory pipe, not the FMA units, sets the pace (as in matmul version 7).  Here every thread owns rows
      and columns in runs of 4 (rows 4*ty + i, columns 4*tx + j, i, j < 4, repeated every 4*TY / 4*TX),
      and every operand is stored so that a run of 4 is contiguous and 16-byte aligned: Q and K
      *transposed* (sQt[d, q], sKt[d, kv]), P transposed (sPt[kv, q]), V as is.  The compiler merges the
      4 loads into one ``ld.shared.v4.f32``: 3 loads per 32 FMAs.
    * Transposing stores: a warp loads a tile as 4 rows x 8 consecutive d (each row's 32 bytes are one
      memory sector, so the global loads stay efficient) and the transposed rows are padded by 4 floats,
      so these 32 stores hit 32 different banks.  P's rows are not padded but *swizzled* in 16-byte
      chunks (chunk c of row kv is stored at c ^ ((kv // 4) % 8)) so that 8 threads storing 16 bytes to 8
      different rows hit different banks.
    * K, V, P and the reduction scratch each get their own buffer: 4 barriers per tile instead of 5, and
      K and V arrive with one load phase.  That is more than the 48 KiB of static shared memory, so the
      buffers are carved out of one *dynamic* shared array (offsets computed here), and
      ``set_max_dynamic_shared`` raises the kernel's limit before the first launch.
    * ``UNROLL=2`` writes the two inner loops two steps at a time with all loads first: the loads of
      step d+1 are in flight while the FMAs of step d run, so a warp does not wait for shared memory
      (this matters because only 2 blocks = 8 warps fit on a multiprocessor).
    """
    NT = TX * TY
    RM, CS, CO = BQ // TY, BKV // TX, D // TX
    QSTR, KSTR = BQ + 4, BKV + 4
    OQ, OK = 0, D * QSTR
    OV = OK + D * KSTR
    OP = OV + BKV * D
    OS = OP + BKV * BQ
    NFLOAT = OS + BQ * TX
    FM = min(8, BQ // 4) - 1  # swizzle mask for P's 16-byte chunks
    assert RM * TY == BQ and CS * TX == BKV and CO * TX == D and RM % 4 == 0 and CS % 4 == 0 and CO % 4 == 0
    assert TX & (TX - 1) == 0 and D % 8 == 0 and (8 * BQ) % NT == 0 or True
    assert (
        (BQ * D) % NT == 0 and (BKV * D) % NT == 0 and NT % 8 == 0 and D % UNROLL == 0 and BKV % UNROLL == 0
    )
    align = "" if config.ENABLE_CUDASIM else ", alignment=16"
    RI, JS, JO = range(RM), range(CS), range(CO)
    rows = [(i // 4) * 4 * TY + i % 4 for i in RI]  # + 4*ty
    scol = [(j // 4) * 4 * TX + j % 4 for j in JS]  # + 4*tx
    ocol = [(j // 4) * 4 * TX + j % 4 for j in JO]  # + 4*tx

    def mx(names):
        while len(names) > 1:
            names = [f"max({a}, {b})" for a, b in zip(names[::2], names[1::2], strict=False)] + names[
                len(names) & ~1 :
            ]
        return names[0]

    def load_transposed(dst_off, stride, nrows, src, row0):
        # a warp covers 4 rows x 8 consecutive d: 32-byte global segments, conflict-free padded stores
        return [
            f"for p in range({(nrows * D) // NT}):",
            f"    idx = tid + {NT} * p",
            f"    r = (idx >> 3) % {nrows}",
            f"    d = ((idx >> 3) // {nrows}) * 8 + (idx & 7)",
            f"    sm[{dst_off} + d * {stride} + r] = {src}[bh, {row0} + r, d]",
        ]

    b = [
        f"sm = cuda.shared.array(0, float32{align})  # all buffers, carved out by offset",
        "tid = cuda.threadIdx.x",
        "tx4 = (tid & (TX - 1)) * 4",
        "ty = tid // TX",
        "ty4 = ty * 4",
        "bh = cuda.blockIdx.y",
        "N = Q.shape[1]",
        "qb = cuda.gridDim.x - 1 - cuda.blockIdx.x" if CAUSAL else "qb = cuda.blockIdx.x",
        "q0 = qb * BQ",
    ]
    b += load_transposed(OQ, QSTR, BQ, "Q", "q0")
    b += ["cuda.syncthreads()", f"for p in range({(BQ * D) // NT}):  # scale Q once, in place"]
    b += [f"    idx = tid + {NT} * p", f"    sm[(idx // BQ) * {QSTR} + idx % BQ] *= qscale"]
    b += [
        f"fs{j // 4} = ({(j // 4) * TX} + (tid & (TX - 1))) & {FM}  # P swizzle of my kv chunk"
        for j in JS[::4]
    ]
    b += [f"m{i} = NEG_INF" for i in RI] + [f"l{i} = float32(0.0)" for i in RI]
    b += [f"o{i}_{j} = float32(0.0)" for i in RI for j in JO]
    b += ["ntiles = (q0 + BQ + BKV - 1) // BKV" if CAUSAL else "ntiles = N // BKV", "for t in range(ntiles):"]
    t = ["kv0 = t * BKV", "cuda.syncthreads()  # the previous tile is finished with every buffer"]
    t += load_transposed(OK, KSTR, BKV, "K", "kv0")
    t += [
        f"for p in range({(BKV * D) // NT}):",
        f"    idx = tid + {NT} * p",
        f"    sm[{OV} + idx] = V[bh, kv0 + idx // D, idx % D]",
        "cuda.syncthreads()",
    ]
    t += [f"s{i}_{j} = float32(0.0)" for i in RI for j in JS]
    t += [f"for d0 in range(0, D, {UNROLL}):  # S = Q K^T: 16-byte loads of 4 rows of Q^T, 4 columns of K^T"]
    for u in range(UNROLL):  # all loads of the UNROLL steps first: they are in flight during the FMAs
        t += [f"    a{i}_{u} = sm[{OQ} + (d0 + {u}) * {QSTR} + ty4 + {rows[i]}]" for i in RI]
        t += [f"    b{j}_{u} = sm[{OK} + (d0 + {u}) * {KSTR} + tx4 + {scol[j]}]" for j in JS]
    for u in range(UNROLL):
        t += [f"    s{i}_{j} += a{i}_{u} * b{j}_{u}" for i in RI for j in JS]
    if CAUSAL:
        t += ["if kv0 + BKV - 1 > q0:  # tile crosses the diagonal: mask keys after the query"]
        t += [
            f"    if kv0 + tx4 + {scol[j]} > q0 + ty4 + {rows[i]}:\n        s{i}_{j} = NEG_INF"
            for i in RI
            for j in JS
        ]
    t += [
        f"sm[{OS} + (ty4 + {rows[i]}) * TX + (tid & (TX - 1))] = {mx([f's{i}_{j}' for j in JS])}" for i in RI
    ]
    t += ["cuda.syncthreads()  # partial row maxima are in"]
    for i in RI:
        t += [
            f"mn{i} = m{i}",
            "for u in range(TX):",
            f"    mn{i} = max(mn{i}, sm[{OS} + (ty4 + {rows[i]}) * TX + u])",
        ]
    for i in RI:
        t += [f"al{i} = math.exp2(m{i} - mn{i})", f"m{i} = mn{i}", f"l{i} *= al{i}"]
        t += [f"o{i}_{j} *= al{i}" for j in JO]
        for j in JS:
            chunk = f"(({(i // 4) * TY} + ty) ^ fs{j // 4})"
            t += [f"s{i}_{j} = math.exp2(s{i}_{j} - mn{i})", f"l{i} += s{i}_{j}"]
            t += [f"sm[{OP} + (tx4 + {scol[j]}) * BQ + {chunk} * 4 + {i % 4}] = s{i}_{j}"]
    t += ["cuda.syncthreads()  # P is complete", f"for kv0 in range(0, BKV, {UNROLL}):  # O += P V"]
    for u in range(UNROLL):
        t += [f"    fk = ((kv0 + {u}) >> 2) & {FM}"]
        t += [
            f"    a{i}_{u} = sm[{OP} + (kv0 + {u}) * BQ + (({(i // 4) * TY} + ty) ^ fk) * 4 + {i % 4}]"
            for i in RI
        ]
        t += [f"    b{j}_{u} = sm[{OV} + (kv0 + {u}) * D + tx4 + {ocol[j]}]" for j in JO]
    for u in range(UNROLL):
        t += [f"    o{i}_{j} += a{i}_{u} * b{j}_{u}" for i in RI for j in JO]
    b += ["    " + line for line in "\n".join(t).split("\n")]
    b += ["cuda.syncthreads()"]
    b += [f"sm[{OS} + (ty4 + {rows[i]}) * TX + (tid & (TX - 1))] = l{i}  # partial row sums" for i in RI]
    b += ["cuda.syncthreads()"]
    for i in RI:
        b += ["lt = float32(0.0)", "for u in range(TX):", f"    lt += sm[{OS} + (ty4 + {rows[i]}) * TX + u]"]
        b += ["inv = float32(1.0) / lt"]
        b += [f"O[bh, q0 + ty4 + {rows[i]}, tx4 + {ocol[j]}] = o{i}_{j} * inv" for j in JO]
        b += ["if tx4 == 0:", f"    L[bh, q0 + ty4 + {rows[i]}] = (m{i} + math.log2(lt)) * LN2"]
    src = "def flash_regtile_v4(Q, K, V, O, L, qscale):  # noqa: E741\n" + _unrolled(b, 4) + "\n"
    # Index the flat buffer with *unsigned* integers: for a signed index Numba adds "if i < 0: i += size"
    # (Python's negative indexing), and with a run-time size that hides from the compiler that sm[x],
    # sm[x + 1], sm[x + 2], sm[x + 3] are neighbours -- no 16-byte loads.  uint64 indices skip that check.
    src = re.sub(r"sm\[([^\]]*)\]", r"sm[U(\1)]", src)
    consts = dict(D=D, BQ=BQ, BKV=BKV, TX=TX, NEG_INF=NEG_INF, LN2=LN2, U=uint64)
    opts = {} if max_registers is None else {"max_registers": max_registers}
    kernel = cuda.jit(compile_source(src, "flash_regtile_v4", consts), **opts)
    nbytes = 4 * NFLOAT
    ready = []

    def launch(Q, K, V, O, L):  # noqa: E741
        BH, N, _ = Q.shape
        assert N % BQ == 0 and N % BKV == 0 and Q.shape[2] == D
        args = (Q, K, V, O, L, q_scale(D))
        if not ready:
            set_max_dynamic_shared(kernel, args, nbytes)
            ready.append(True)
        kernel[(N // BQ, BH), NT, 0, nbytes](*args)

    launch.kernel = kernel
    launch.source = src
    launch.shared_bytes = nbytes
    return launch


# ---------------------------------------------------------------------------------------------------------
# 6. warp shuffles for the row reductions, P private to each warp, double-buffered K/V: one barrier per tile
# ---------------------------------------------------------------------------------------------------------


def make_flash_v6(
    D=64, BQ=256, BKV=64, TX=8, TY=32, CAUSAL=False, max_registers=None, UNROLL=2, PREFETCH=True
):
    """Version 5 with the block-wide synchronisation cut from four barriers per key tile to one.

    Version 5 spends four ``syncthreads`` per key tile, and with only one or two blocks on a
    multiprocessor every barrier idles the whole SM while the slowest warp catches up; the K/V global
    loads (L2 latency, ~1 microsecond) sit between two of them with nothing to overlap.  What changes:

    * **Row max and row sum by warp shuffles.**  A query row belongs to the TX threads with the same ty:
      TX consecutive lanes of *one warp*.  ``cuda.shfl_xor_sync`` with lane offsets 1, 2, 4 (log2 TX
      steps, a butterfly) leaves the row max in all TX lanes, with no shared scratch and no barrier
      (version 5: write partials, barrier, TX shared loads per row).
    * **P stays inside the warp.**  The rows of P a thread writes are the rows of O it later computes,
      and those rows belong to the same TX lanes: the P tile is read only by the warp that wrote it.
      ``cuda.syncwarp()`` (the lanes of one warp) replaces the block barrier between writing and reading P.
    * **Double-buffered K and V, loaded during the P V product.**  Two K/V buffers: while tile t is in
      use, the global loads of tile t+1 are issued into registers right after P is written (the 64 scores
      are dead by then, so the 32 extra registers cost nothing at the S-phase peak), their latency hides
      behind the P V product, and they are stored into the other buffer afterwards.  One barrier at the
      end of the tile then orders everything: the stores to the other buffer before its next use, this
      tile's reads of K, V and P before they are overwritten two tiles (K/V) or one tile (P) later.
      The last tile reloads itself into the spare buffer (unused; it keeps the code branch-free).
      ``PREFETCH=False`` issues those loads after the P V product instead (fewer live registers; the
      latency is then hidden only by other warps, which the single barrier lets run ahead).
    * Q is scaled while it is loaded (one barrier fewer before the loop).
    * K and V are passed *flattened* (1-D), so the address of a thread's p-th K/V element in a tile is
      one base index plus a compile-time constant.  With 3-D indexing the row stride comes from the
      array's run-time shape, and the compiler keeps a precomputed offset per load in a register for
      the whole loop (ptxas, sm_90, BQ=256: 255 registers and 76 bytes of spills; flat: 217, no spills).

    Shared memory at BQ = 256: Q 65 KiB, K 2 x 17 KiB, V 2 x 16 KiB, P 64 KiB: 195 KiB, one block per SM.
    The thread layout, the 16-byte loads and the swizzles are those of ``make_flash_regtile_v4``.
    """
    NT = TX * TY
    RM, CS, CO = BQ // TY, BKV // TX, D // TX
    QSTR, KSTR = BQ + 4, BKV + 4
    KBUF, VBUF = D * KSTR, BKV * D
    OQ, OK = 0, D * QSTR
    OV = OK + 2 * KBUF
    OP = OV + 2 * VBUF
    NFLOAT = OP + BKV * BQ
    FM = min(8, BQ // 4) - 1  # swizzle mask for P's 16-byte chunks
    G = NT // 8  # rows of a K tile covered by one pass of the block (a warp: 4 rows x 8 consecutive d)
    assert RM * TY == BQ and CS * TX == BKV and CO * TX == D and RM % 4 == 0 and CS % 4 == 0 and CO % 4 == 0
    assert TX & (TX - 1) == 0 and TX <= 32 and NT % 32 == 0 and BKV % G == 0 and D % 8 == 0
    assert (BQ * D) % NT == 0 and (BKV * D) % NT == 0 and D % UNROLL == 0 and BKV % UNROLL == 0
    align = "" if config.ENABLE_CUDASIM else ", alignment=16"
    RI, JS, JO = range(RM), range(CS), range(CO)
    rows = [(i // 4) * 4 * TY + i % 4 for i in RI]  # + 4*ty
    scol = [(j // 4) * 4 * TX + j % 4 for j in JS]  # + 4*tx
    ocol = [(j // 4) * 4 * TX + j % 4 for j in JO]  # + 4*tx
    LK = (BKV * D) // NT  # K (and V) values each thread loads per tile
    # K element p of this thread: row g + G*(p % (BKV//G)), column e + 8*(p // (BKV//G)),
    # with g = tid >> 3, e = tid & 7 (a warp reads 4 rows x 8 consecutive d: 32-byte segments)
    kr = [G * (p % (BKV // G)) for p in range(LK)]
    kc = [8 * (p // (BKV // G)) for p in range(LK)]
    shifts = []
    s = 1
    while s < TX:
        shifts.append(s)
        s *= 2

    def mx(names):
        while len(names) > 1:
            names = [f"max({a}, {b})" for a, b in zip(names[::2], names[1::2], strict=False)] + names[
                len(names) & ~1 :
            ]
        return names[0]

    def fetch(row0):  # global loads of one K/V tile into registers: one base index + constants
        out = [f"kb = (bh * N + {row0} + g) * D + e", f"vb = (bh * N + {row0}) * D + tid"]
        out += [f"pk{p} = K[U(kb + {kr[p] * D + kc[p]})]" for p in range(LK)]
        out += [f"pv{p} = V[U(vb + {NT * p})]" for p in range(LK)]
        return out

    def store(buf):  # K transposed (padded rows), V as is
        out = [f"sm[{OK} + {buf} * {KBUF} + (e + {kc[p]}) * {KSTR} + g + {kr[p]}] = pk{p}" for p in range(LK)]
        out += [f"sm[{OV} + {buf} * {VBUF} + tid + {NT * p}] = pv{p}" for p in range(LK)]
        return out

    b = [
        f"sm = cuda.shared.array(0, float32{align})  # all buffers, carved out by offset",
        "tid = cuda.threadIdx.x",
        "lane = tid & (TX - 1)",
        "tx4 = lane * 4",
        "ty = tid // TX",
        "ty4 = ty * 4",
        "g = tid >> 3",
        "e = tid & 7",
        "bh = cuda.blockIdx.y",
        "N = Q.shape[1]",
        "qb = cuda.gridDim.x - 1 - cuda.blockIdx.x" if CAUSAL else "qb = cuda.blockIdx.x",
        "q0 = qb * BQ",
        f"for p in range({(BQ * D) // NT}):  # Q tile, transposed and scaled once",
        f"    idx = tid + {NT} * p",
        f"    r = (idx >> 3) % {BQ}",
        f"    d = ((idx >> 3) // {BQ}) * 8 + (idx & 7)",
        f"    sm[{OQ} + d * {QSTR} + r] = Q[bh, q0 + r, d] * qscale",
    ]
    b += fetch("0") + store("0") + ["cuda.syncthreads()  # Q and the first K/V tile are in"]
    b += [f"fs{j // 4} = ({(j // 4) * TX} + lane) & {FM}  # P swizzle of my kv chunk" for j in JS[::4]]
    b += [f"m{i} = NEG_INF" for i in RI] + [f"l{i} = float32(0.0)" for i in RI]
    b += [f"o{i}_{j} = float32(0.0)" for i in RI for j in JO]
    b += ["ntiles = (q0 + BQ + BKV - 1) // BKV" if CAUSAL else "ntiles = N // BKV", "for t in range(ntiles):"]
    t = [
        "kv0 = t * BKV",
        "cur = t & 1",
        f"ok = {OK} + cur * {KBUF}",
        f"ov = {OV} + cur * {VBUF}",
    ]
    t += [f"s{i}_{j} = float32(0.0)" for i in RI for j in JS]
    t += [f"for d0 in range(0, D, {UNROLL}):  # S = Q K^T: 16-byte loads of 4 rows of Q^T, 4 columns of K^T"]
    for u in range(UNROLL):
        t += [f"    a{i}_{u} = sm[{OQ} + (d0 + {u}) * {QSTR} + ty4 + {rows[i]}]" for i in RI]
        t += [f"    b{j}_{u} = sm[ok + (d0 + {u}) * {KSTR} + tx4 + {scol[j]}]" for j in JS]
    for u in range(UNROLL):
        t += [f"    s{i}_{j} += a{i}_{u} * b{j}_{u}" for i in RI for j in JS]
    if CAUSAL:
        t += ["if kv0 + BKV - 1 > q0:  # tile crosses the diagonal: mask keys after the query"]
        t += [
            f"    if kv0 + tx4 + {scol[j]} > q0 + ty4 + {rows[i]}:\n        s{i}_{j} = NEG_INF"
            for i in RI
            for j in JS
        ]
    for i in RI:  # row max: my columns, then a butterfly over the TX lanes of the row
        t += [f"mn{i} = {mx([f's{i}_{j}' for j in JS])}"]
        t += [f"mn{i} = max(mn{i}, cuda.shfl_xor_sync(FULL, mn{i}, {sh}))" for sh in shifts]
        t += [f"mn{i} = max(mn{i}, m{i})"]
    for i in RI:
        t += [f"al{i} = math.exp2(m{i} - mn{i})", f"m{i} = mn{i}", f"l{i} *= al{i}"]
        t += [f"o{i}_{j} *= al{i}" for j in JO]
        for j in JS:
            chunk = f"(({(i // 4) * TY} + ty) ^ fs{j // 4})"
            t += [f"s{i}_{j} = math.exp2(s{i}_{j} - mn{i})", f"l{i} += s{i}_{j}"]
            t += [f"sm[{OP} + (tx4 + {scol[j]}) * BQ + {chunk} * 4 + {i % 4}] = s{i}_{j}"]
    t += ["cuda.syncwarp()  # my warp's rows of P are complete (only this warp reads them)"]
    t += ["kvn = min(t + 1, ntiles - 1) * BKV  # next tile (the last one reloads itself)"]
    if PREFETCH:
        t += fetch("kvn")
    t += [f"for kk in range(0, BKV, {UNROLL}):  # O += P V while the next tile's loads are in flight"]
    for u in range(UNROLL):
        t += [f"    fk = ((kk + {u}) >> 2) & {FM}"]
        t += [
            f"    a{i}_{u} = sm[{OP} + (kk + {u}) * BQ + (({(i // 4) * TY} + ty) ^ fk) * 4 + {i % 4}]"
            for i in RI
        ]
        t += [f"    b{j}_{u} = sm[ov + (kk + {u}) * D + tx4 + {ocol[j]}]" for j in JO]
    for u in range(UNROLL):
        t += [f"    o{i}_{j} += a{i}_{u} * b{j}_{u}" for i in RI for j in JO]
    if not PREFETCH:
        t += fetch("kvn")
    t += store("(1 - cur)")
    t += ["cuda.syncthreads()  # next K/V stored; this tile's K, V, P reads done"]
    b += ["    " + line for line in "\n".join(t).split("\n")]
    for i in RI:  # row sum: butterfly over the TX lanes of the row
        b += [f"l{i} += cuda.shfl_xor_sync(FULL, l{i}, {sh})" for sh in shifts]
        b += [f"inv = float32(1.0) / l{i}"]
        b += [f"O[bh, q0 + ty4 + {rows[i]}, tx4 + {ocol[j]}] = o{i}_{j} * inv" for j in JO]
        b += ["if lane == 0:", f"    L[bh, q0 + ty4 + {rows[i]}] = (m{i} + math.log2(l{i})) * LN2"]
    src = "def flash_v6(Q, K, V, O, L, qscale):  # noqa: E741\n" + _unrolled(b, 4) + "\n"
    src = re.sub(r"sm\[([^\]]*)\]", r"sm[U(\1)]", src)  # unsigned shared indices, as in version 4
    consts = dict(D=D, BQ=BQ, BKV=BKV, TX=TX, NEG_INF=NEG_INF, LN2=LN2, U=uint64, FULL=0xFFFFFFFF)
    opts = {} if max_registers is None else {"max_registers": max_registers}
    kernel = cuda.jit(compile_source(src, "flash_v6", consts), **opts)
    nbytes = 4 * NFLOAT
    ready = []

    def launch(Q, K, V, O, L):  # noqa: E741
        BH, N, _ = Q.shape
        assert N % BQ == 0 and N % BKV == 0 and Q.shape[2] == D
        args = (Q, K.reshape(BH * N * D), V.reshape(BH * N * D), O, L, q_scale(D))  # K, V flat
        if not ready:
            set_max_dynamic_shared(kernel, args, nbytes)
            ready.append(True)
        kernel[(N // BQ, BH), NT, 0, nbytes](*args)

    launch.kernel = kernel
    launch.source = src
    launch.shared_bytes = nbytes
    return launch
