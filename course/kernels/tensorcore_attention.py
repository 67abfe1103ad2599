"""FlashAttention forward on tensor cores from Numba: bf16 Q, K, V; fp32 scores, softmax and output.

The pieces of ``tensorcore.py`` (mma.sync m16n8k16, ldmatrix, cp.async, linked from ``mma.cu``) arranged as
FlashAttention-2 does.  A block owns BQ query rows, 16 per warp; K and V tiles of BKV keys are copied into
two shared buffers by cp.async (the next tile's copies fly while this one is used, one barrier per tile).
Per key tile, each warp:

1. S = Q K^T (16 x BKV, fp32 accumulators): Q's fragments stay in registers for the whole kernel; K's come
   from ``ldmatrix`` without transposing (K stored [key][dim] *is* the "col" layout B = K^T wants).
2. Online softmax on the accumulators, in base 2 (S scaled by s*log2(e)): a lane holds two rows (g and
   g + 8) of S, the four lanes of a row group combine their row maxima by two ``shfl_xor_sync``.
3. O += P V: the accumulator layout of S is the A-fragment layout of the next product, so P goes from
   registers to registers (two fp32 packed into one bf16x2 register, ``pack_bf16x2``), never to memory;
   V's fragments come from ``ldmatrix.trans`` (V stored [key][dim]).

Inputs are (BH, N, D) bf16 PyTorch tensors, passed by address; O is float32 (BH, N, D), L the natural-log
logsumexp (BH, N).  N must be a multiple of BQ and BKV.
"""

import numpy as np
from numba import cuda, int32, uint64

from .attention import LN2, NEG_INF, q_scale, set_max_dynamic_shared
from .matmul import _unrolled, compile_source
from .tensorcore import LINKED


def make_flash_tc(D=64, BQ=64, BKV=64, CAUSAL=False, max_registers=None):
    """launch(Q, K, V, O, L) for head dimension D: the kernel described in the module docstring."""
    NT = 2 * BQ  # threads: a warp per 16 rows
    P = (D + 8) * 2  # row pitch in bytes (16 bytes of padding: ldmatrix rows in distinct banks)
    TILE = BKV * P
    OQ, OK = 0, BQ * P
    OV = OK + 2 * TILE
    SHARED = OV + 2 * TILE
    CH = D // 8  # 16-byte chunks per row
    NJ, NO, KC, PC = BKV // 8, D // 8, D // 16, BKV // 16
    LQ, LK = BQ * CH // NT, BKV * CH // NT
    assert BQ % 16 == 0 and D % 16 == 0 and BKV % 16 == 0 and LQ * NT == BQ * CH and LK * NT == BKV * CH
    assert NO % 2 == 0 and NJ % 2 == 0 and (not CAUSAL or BQ % BKV == 0 or BKV % BQ == 0)

    def copy(pointer, row0, smem, count):
        out = []
        for p in range(count):
            out += [f"c = tid + {NT * p}",
                    f"_ = cp_async(I32({smem} + (c // {CH}) * {P} + (c % {CH}) * 16), "
                    f"{pointer} + U((head + ({row0} + c // {CH}) * {D} + (c % {CH}) * 8) * 2))"]
        return out

    def copy_kv(tile, buf):
        return (copy("k_ptr", f"{tile} * {BKV}", f"{OK} + {buf} * {TILE}", LK)
                + copy("v_ptr", f"{tile} * {BKV}", f"{OV} + {buf} * {TILE}", LK))

    b = [
        "tid = cuda.threadIdx.x",
        "lane = tid & 31",
        "warp = tid >> 5",
        "g = lane >> 2",
        "t = lane & 3",
        "bh = cuda.blockIdx.y",
        "qb = cuda.gridDim.x - 1 - cuda.blockIdx.x" if CAUSAL else "qb = cuda.blockIdx.x",
        f"q0 = qb * {BQ}",
        f"head = bh * N * {D}",
    ]
    b += copy("q_ptr", "q0", str(OQ), LQ) + ["_ = commit()"] + copy_kv("0", "0") + ["_ = commit()"]
    b += ["_ = wait0()", "cuda.syncthreads()  # Q and the first K/V tile are in"]
    for kc in range(KC):  # this warp's 16 rows of Q, as A fragments, for the whole kernel
        b += [f"qa{kc}_0, qa{kc}_1, qa{kc}_2, qa{kc}_3 = "
              f"ldsm(I32({OQ} + (warp * 16 + (lane & 15)) * {P} + (lane >> 4) * 16 + {32 * kc}))"]
    b += ["m0 = NEG_INF", "m1 = NEG_INF", "l0 = float32(0.0)", "l1 = float32(0.0)"]
    b += [f"o{j}_{r} = float32(0.0)" for j in range(NO) for r in range(4)]
    b += [f"ntiles = (q0 + {BQ} + {BKV - 1}) // {BKV}" if CAUSAL else f"ntiles = N // {BKV}"]
    b += ["for kt in range(ntiles):"]
    t = ["cur = kt & 1",
         "_ = wait0()  # my copies of this tile have landed",
         "cuda.syncthreads()  # everyone's have; everyone is done with the other buffer",
         "if kt + 1 < ntiles:"]
    t += ["    " + line for line in copy_kv("(kt + 1)", "(1 - cur)")]
    t += ["_ = commit()", f"kb = {OK} + cur * {TILE}", f"vb = {OV} + cur * {TILE}"]
    t += [f"s{j}_{r} = float32(0.0)" for j in range(NJ) for r in range(4)]
    for kc in range(KC):  # S = Q K^T
        for jj in range(NJ // 2):
            t += [f"b0, b1, b2, b3 = ldsm(I32(kb + ({16 * jj} + (lane & 7) + ((lane >> 4) << 3)) * {P} "
                  f"+ {32 * kc} + ((lane >> 3) & 1) * 16))"]
            for j, (x, y) in ((2 * jj, ("b0", "b1")), (2 * jj + 1, ("b2", "b3"))):
                c = ", ".join(f"s{j}_{r}" for r in range(4))
                t += [f"{c} = mma(qa{kc}_0, qa{kc}_1, qa{kc}_2, qa{kc}_3, {x}, {y}, {c})"]
    t += [f"s{j}_{r} *= qscale" for j in range(NJ) for r in range(4)]
    if CAUSAL:
        t += [f"if kt * {BKV} + {BKV - 1} > q0:  # the tile crosses the diagonal: mask keys after the query",
              "    row = q0 + warp * 16 + g"]
        for j in range(NJ):
            for r in range(4):
                t += [f"    if kt * {BKV} + {8 * j} + 2 * t + {r & 1} > row + {8 * (r >> 1)}:",
                      f"        s{j}_{r} = NEG_INF"]
    for h in range(2):  # rows g (registers 0, 1) and g + 8 (registers 2, 3)
        regs = [f"s{j}_{2 * h + r}" for j in range(NJ) for r in range(2)]
        t += [f"mx = max({regs[0]}, {regs[1]})"] + [f"mx = max(mx, {x})" for x in regs[2:]]
        t += [f"mx = max(mx, cuda.shfl_xor_sync(FULL, mx, {lanes}))" for lanes in (1, 2)]
        t += [f"mx = max(mx, m{h})", f"al = math.exp2(m{h} - mx)", f"m{h} = mx", f"l{h} *= al"]
        t += [f"o{j}_{2 * h + r} *= al" for j in range(NO) for r in range(2)]
        t += [f"{x} = math.exp2({x} - mx)" for x in regs]
        t += [f"l{h} += {x}" for x in regs]
    for kc in range(PC):  # O += P V, P straight from the S registers
        t += [f"pa{2 * half + h} = pack(s{2 * kc + half}_{2 * h}, s{2 * kc + half}_{2 * h + 1})"
              for half in range(2) for h in range(2)]
        for jj in range(NO // 2):
            t += [f"b0, b1, b2, b3 = ldsm_t(I32(vb + ({16 * kc} + (lane & 15)) * {P} "
                  f"+ ({16 * jj} + (lane >> 4) * 8) * 2))"]
            for j, (x, y) in ((2 * jj, ("b0", "b1")), (2 * jj + 1, ("b2", "b3"))):
                c = ", ".join(f"o{j}_{r}" for r in range(4))
                t += [f"{c} = mma(pa0, pa1, pa2, pa3, {x}, {y}, {c})"]
    b += ["    " + line for line in t]
    for h in range(2):
        b += [f"l{h} += cuda.shfl_xor_sync(FULL, l{h}, 1)", f"l{h} += cuda.shfl_xor_sync(FULL, l{h}, 2)",
              f"inv{h} = float32(1.0) / l{h}", f"row{h} = q0 + warp * 16 + g + {8 * h}"]
        b += [f"O[bh, row{h}, {8 * j} + 2 * t + {r}] = o{j}_{2 * h + r} * inv{h}"
              for j in range(NO) for r in range(2)]
        b += ["if t == 0:", f"    L[bh, row{h}] = (m{h} + math.log2(l{h})) * LN2"]
    src = "def flash_tc(q_ptr, k_ptr, v_ptr, O, L, N, qscale):  # noqa: E741\n" + _unrolled(b, 4) + "\n"
    consts = dict(LINKED, U=uint64, I32=int32, NEG_INF=NEG_INF, LN2=LN2, FULL=0xFFFFFFFF)
    opts = {} if max_registers is None else {"max_registers": max_registers}
    kernel = cuda.jit(compile_source(src, "flash_tc", consts), **opts)
    cache = {}

    def launch(Q, K, V, O, L):  # noqa: E741
        BH, N, _ = Q.shape
        assert N % BQ == 0 and N % BKV == 0 and Q.shape[2] == D
        key = (Q.data_ptr(), K.data_ptr(), V.data_ptr(), O.data_ptr(), L.data_ptr(), N)
        if key not in cache:
            cache[key] = (np.uint64(Q.data_ptr()), np.uint64(K.data_ptr()), np.uint64(V.data_ptr()),
                          cuda.as_cuda_array(O), cuda.as_cuda_array(L), N, np.float32(q_scale(D)))
            set_max_dynamic_shared(kernel, cache[key], SHARED)
        kernel[(N // BQ, BH), NT, 0, SHARED](*cache[key])

    launch.kernel = kernel
    launch.source = src
    launch.shared_bytes = SHARED
    return launch
