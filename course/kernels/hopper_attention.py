"""FlashAttention forward on Hopper's warpgroup instructions, from Numba: bf16 Q, K, V (head dimension 64),
fp32 scores, softmax and output -- the kernel of ``tensorcore_attention.py`` rebuilt on ``hopper.py``'s
pieces, the way FlashAttention-3 is built.

A block owns 128 query rows of one (batch, head) and has three warpgroups. Warpgroup 0's first thread is the
producer: one TMA copy brings the Q tile, then, per key tile of BKV keys, two copies (K and V) into one of
STAGES buffers, on the buffer's "full" mbarrier, after waiting for its "empty" one. Warpgroups 1 and 2 own 64
query rows each and, per key tile:

1. S = Q Kᵀ (64 x BKV, fp32): four ``wgmma.m64nBKVk16`` with Q and K both read from shared memory, K-major
   (K stored [key][dim] has the dimension contiguous, which is K for this product).
2. The online softmax on S's accumulators, in base 2; the wgmma accumulator layout gives each thread two rows
   (g and g + 8 of its warp's 16), so the row maxima and sums combine over the four threads of a row group
   with two ``shfl_xor_sync``, as in Part 7.
3. O += P V: P never leaves the registers: the accumulator layout of S *is* the register layout wgmma takes
   for A (per warp, the m16n8k16 A fragment), so each 16 keys of P are four bf16x2 registers; V is read
   from shared memory MN-major (V stored [key][dim] has the output dimension contiguous; ``imm-trans-b``).
4. Once both products are done, one thread per warpgroup arrives on the buffer's "empty" barrier.

PIPELINED (as FlashAttention-3 overlaps them within a warpgroup): the products of tile j's P and V are
issued together with tile j + 1's S = Q Kᵀ, and the softmax of S j + 1 runs while P V of tile j is still on
the tensor cores; only then are O rescaled and the next P packed. The scores are scaled to base 2 inside the
exponential (one fused multiply-add per score).

PINGPONG: the two consumer warpgroups take turns to issue their products (named barriers 1 and 2, as
FlashAttention-3 schedules them), so that while one computes its softmax the tensor cores run the other's
products; without it, both tend to reach the softmax together and the tensor cores wait.

Causal: blocks start from the last query tile (the longest), and key tiles past the block's last row are
skipped. Inputs (BH, N, 64) bf16 tensors; O float32 (BH, N, 64), L the natural-log logsumexp (BH, N); N a
multiple of 128 and of BKV.
"""

import numpy as np
from numba import config, cuda, int32

from . import hopper
from .attention import LN2, NEG_INF, q_scale, set_max_dynamic_shared
from .matmul import _unrolled, compile_source

D, BQ = 64, 128


def _consumer(BKV, STAGES, CAUSAL, layout, PINGPONG, PIPELINED):
    Q_BYTES, KV_BYTES, STAGE, FULL, EMPTY, QFULL = layout
    NS, NO = BKV // 2, D // 2  # accumulators of S (64 x BKV) and of O (64 x 64) per thread
    s = [f"c{i}" for i in range(NS)]
    o = [f"o{i}" for i in range(NO)]
    sacc, oacc = ", ".join(s), ", ".join(o)

    def wait_tile():
        return [f"st = kt % {STAGES}", f"_ = mbar_wait(I32({FULL} + 8 * st), I32((kt // {STAGES}) & 1))",
                f"kb = {Q_BYTES} + st * {STAGE}", f"vb = kb + {KV_BYTES}"]

    def issue_s():
        out = [f"{x} = float32(0.0)" for x in s] + (["_ = turn_wait(1 + w)  # my turn"] if PINGPONG else [])
        out += ["_ = wg_fence()"]
        out += [f"{sacc} = wgmma(I32(w * {64 * 128} + {32 * k}), I32(kb + {32 * k}), {sacc})"
                for k in range(4)]
        return out + ["_ = wg_commit()"]

    def issue_pv(v):
        out = [f"{oacc} = wgmma_rs(p{kc}_0, p{kc}_1, p{kc}_2, p{kc}_3, I32({v} + {2048 * kc}), {oacc})"
               for kc in range(BKV // 16)]
        return out + ["_ = wg_commit()"]

    def pass_turn(last):
        return [f"if w == 0 or not ({last}):", "    _ = turn_pass(2 - w)"] if PINGPONG else []

    def softmax():
        """Mask, new row maxima (scores scaled to base 2 on the way), exponentials in place, row sums;
        al0, al1: the factors the old O and sums shrink by."""
        out = []
        if CAUSAL:  # accumulator 4 j + r: row g + 8 (r >> 1), column 8 j + 2 t + (r & 1) of the tile
            out += [f"if kt * {BKV} + {BKV - 1} > q0 + 64 * w:  # the tile crosses this warpgroup's diagonal"]
            for i in range(NS):
                j, r = divmod(i, 4)
                out += [f"    if kt * {BKV} + {8 * j} + 2 * t + {r & 1} > row + {8 * (r >> 1)}:",
                        f"        c{i} = NEG_INF"]
        for h in range(2):  # row g: accumulators 4 j + 0, 1; row g + 8: 4 j + 2, 3
            regs = [f"c{4 * j + 2 * h + r}" for j in range(NS // 4) for r in range(2)]
            out += [f"mx = max({regs[0]}, {regs[1]})"] + [f"mx = max(mx, {x})" for x in regs[2:]]
            out += [f"mx = max(mx, cuda.shfl_xor_sync(FULL_MASK, mx, {lanes}))" for lanes in (1, 2)]
            out += [f"mx = max(mx * qscale, m{h})", f"al{h} = math.exp2(m{h} - mx)", f"m{h} = mx",
                    f"l{h} *= al{h}", "neg = -mx"]
            out += [f"{x} = math.exp2(cuda.fma({x}, qscale, neg))" for x in regs]
            out += [f"l{h} += {x}" for x in regs]
        return out

    def rescale_and_pack():
        out = [f"o{4 * j + 2 * h + r} *= al{h}" for h in range(2) for j in range(NO // 4) for r in range(2)]
        for kc in range(BKV // 16):  # 16 keys: S blocks 2 kc and 2 kc + 1, rows g and g + 8
            out += [f"p{kc}_{q} = pack(c{8 * kc + 2 * q}, c{8 * kc + 2 * q + 1})" for q in range(4)]
        return out

    release = ["if (tid & 127) == 0:", f"    _ = arrive(I32({EMPTY} + 8 * sp))"]
    b = ["_ = consumer_regs()", "w = wg - 1", "lane = tid & 31", "g = lane >> 2", "t = lane & 3",
         "row = q0 + 64 * w + 16 * ((tid >> 5) & 3) + g  # my first row; the second is row + 8",
         f"_ = mbar_wait({QFULL}, 0)", "m0 = NEG_INF", "m1 = NEG_INF", "l0 = float32(0.0)",
         "l1 = float32(0.0)"]
    b += [f"{x} = float32(0.0)" for x in o]
    if PINGPONG:
        b += ["if w == 1:", "    _ = turn_pass(1)  # warpgroup 0 goes first"]
    if PIPELINED:  # S of tile kt is computed while the products of tile kt - 1's P and V run
        b += ["kt = 0"] + wait_tile() + issue_s() + pass_turn("ntiles == 1") + ["_ = wg_wait(0)"]
        b += softmax() + rescale_and_pack() + ["vp = vb", "sp = st"]
        loop = wait_tile() + issue_s() + issue_pv("vp") + pass_turn("kt + 1 == ntiles")
        loop += ["_ = wg_wait(1)  # S is done; the products of P and V may still run"]
        loop += softmax() + ["_ = wg_wait(0)"] + release + rescale_and_pack() + ["vp = vb", "sp = st"]
        b += ["for kt in range(1, ntiles):"] + ["    " + line for line in loop]
        b += ["_ = wg_fence()"] + issue_pv("vp") + ["_ = wg_wait(0)"] + release
    else:
        loop = wait_tile() + issue_s() + pass_turn("kt + 1 == ntiles") + ["_ = wg_wait(0)"]
        loop += softmax() + rescale_and_pack() + ["_ = wg_fence()"] + issue_pv("vb")
        loop += ["_ = wg_wait(0)", "sp = st"] + release
        b += ["for kt in range(ntiles):"] + ["    " + line for line in loop]
    for h in range(2):
        b += [f"l{h} += cuda.shfl_xor_sync(FULL_MASK, l{h}, {lanes})" for lanes in (1, 2)]
        b += [f"inv{h} = float32(1.0) / l{h}"]
        b += [f"O[bh, row + {8 * h}, {8 * j} + 2 * t + {r}] = o{4 * j + 2 * h + r} * inv{h}"
              for j in range(NO // 4) for r in range(2)]
        b += ["if t == 0:", f"    L[bh, row + {8 * h}] = (m{h} + math.log2(l{h})) * LN2"]
    return b


def make_flash_wgmma(BKV=128, STAGES=4, CAUSAL=False, PINGPONG=True, PIPELINED=True):
    """launch(Q, K, V, O, L) for head dimension 64: the kernel of the module docstring."""
    assert not config.ENABLE_CUDASIM, "wgmma kernels run on a GPU of compute capability 9.0 only"
    Q_BYTES, KV_BYTES = BQ * 128, BKV * 128
    STAGE = 2 * KV_BYTES
    FULL = Q_BYTES + STAGES * STAGE
    EMPTY, QFULL = FULL + 8 * STAGES, FULL + 16 * STAGES
    SHARED = QFULL + 8 + 1024
    layout = (Q_BYTES, KV_BYTES, STAGE, FULL, EMPTY, QFULL)
    b = ["tid = cuda.threadIdx.x", "wg = tid >> 7", "bh = cuda.blockIdx.y",
         "qb = cuda.gridDim.x - 1 - cuda.blockIdx.x" if CAUSAL else "qb = cuda.blockIdx.x",
         f"q0 = qb * {BQ}", "base = bh * N",
         f"ntiles = (q0 + {BQ} + {BKV - 1}) // {BKV}" if CAUSAL else f"ntiles = N // {BKV}",
         "if tid == 0:"]
    b += [f"    _ = mbar_init({FULL + 8 * i}, 1)" for i in range(STAGES)]
    b += [f"    _ = mbar_init({EMPTY + 8 * i}, 2)" for i in range(STAGES)]
    b += [f"    _ = mbar_init({QFULL}, 1)", "    _ = mbar_init_fence()", "cuda.syncthreads()"]
    producer = ["_ = producer_regs()", "if tid == 0:", "    _ = tmap_acquire(q_map)",
                "    _ = tmap_acquire(k_map)", "    _ = tmap_acquire(v_map)",
                f"    _ = expect_tx({QFULL}, {Q_BYTES})",
                f"    _ = tma(q_map, 0, {QFULL}, 0, I32(base + q0))",
                "    for kt in range(ntiles):",
                f"        st = kt % {STAGES}",
                f"        _ = mbar_wait(I32({EMPTY} + 8 * st), I32(((kt // {STAGES}) & 1) ^ 1))",
                f"        _ = expect_tx(I32({FULL} + 8 * st), {STAGE})",
                f"        _ = tma(k_map, I32({Q_BYTES} + st * {STAGE}), I32({FULL} + 8 * st), 0, "
                f"I32(base + kt * {BKV}))",
                f"        _ = tma(v_map, I32({Q_BYTES} + st * {STAGE} + {KV_BYTES}), I32({FULL} + 8 * st), "
                f"0, I32(base + kt * {BKV}))"]
    consumer = _consumer(BKV, STAGES, CAUSAL, layout, PINGPONG, PIPELINED)
    b += ["if wg == 0:"] + ["    " + line for line in producer]
    b += ["else:"] + ["    " + line for line in consumer]
    src = "def flash_wgmma(q_map, k_map, v_map, O, L, N, qscale):  # noqa: E741\n" + _unrolled(b, 4) + "\n"
    declared = hopper.DECLARED.get(BKV)
    consts = dict(declared, wgmma_rs=declared["wgmma_rs64"], I32=int32, NEG_INF=NEG_INF, LN2=LN2,
                  FULL_MASK=0xFFFFFFFF)
    kernel = cuda.jit(compile_source(src, "flash_wgmma", consts), max_registers=168)
    cache = {}

    def launch(Q, K, V, O, L):  # noqa: E741
        BH, N, _ = Q.shape
        assert N % BQ == 0 and N % BKV == 0 and Q.shape[2] == D
        key = (Q.data_ptr(), K.data_ptr(), V.data_ptr(), O.data_ptr(), L.data_ptr(), N)
        if key not in cache:
            maps = [cuda.to_device(hopper.tensor_map(x.view(BH * N, D), rows))
                    for x, rows in ((Q, BQ), (K, BKV), (V, BKV))]
            args = tuple(np.uint64(m.device_ctypes_pointer.value) for m in maps)
            args += (cuda.as_cuda_array(O), cuda.as_cuda_array(L), N, np.float32(q_scale(D)))
            cache[key] = (args, maps)
            set_max_dynamic_shared(kernel, args, SHARED)
        kernel[(N // BQ, BH), 384, 0, SHARED](*cache[key][0])

    launch.kernel, launch.source, launch.shared_bytes = kernel, src, SHARED
    return launch
