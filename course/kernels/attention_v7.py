"""FlashAttention forward version 7 (float32): version 6's kernel with the causal triangle's work balanced.

Version 6 launches its blocks in the order (query block, head), heads outermost, and a causal block
``qb`` walks ``qb + 1`` units of work (BQ / BKV key tiles each): the last heads' heaviest blocks start
last and run alone at the end.  With one 256-row block per SM, a list-scheduling model of the launch
order (blocks start in order on the first free SM) predicts version 6's causal times from its full
times within 3 %: 108 of an ideal 66 tile-steps per SM at (BH=16, N=4096), 380 of 252 at (4, 16384).

What changes (the per-tile code is version 6's):

* **Heaviest blocks first.**  The grid is (head, query block) with heads *innermost* and the last query
  blocks first, so every head's heaviest block starts in the first wave and the light ones fill the
  gaps at the end (longest-processing-time-first scheduling): the model gives 68 and 256 tile-steps.
* ``PAIRS=True`` (a variant): each block runs two query blocks, ``qb`` and ``nqb - 1 - qb``, one after the
  other, so all blocks carry the same work (the model: 68 and 260).
* Any N.  When N is not a multiple of both tiles, a second kernel is compiled with bounds checks: query
  rows past N read row N - 1 and are not stored; key rows past N read row N - 1 (a separate, clamped load
  path taken only by the last tile) and are masked (causal: by the causal mask itself, since every such
  key lies after every stored query).  For other N the kernel has no checks at all.
* As in version 6, key tiles wholly above the diagonal are skipped and only tiles that cross it are masked.
* For ring attention's blocks (``bench/ring_attention.py``): ``OFFSET`` moves the causal diagonal (key j is
  seen by query i when j <= i + OFFSET; -1 is the mask between two stripes of striped attention, where the
  first query sees no key at all: its O is 0 and its logsumexp -inf), and K and V may hold another number of
  rows than Q (full attention only: the zig-zag layout's half blocks).

Measured on an H200 (``bench/NOTES.md``): causal 1.49x and 1.44x faster than version 6, 0.79 and 0.73 of
PyTorch SDPA's time; the pairing variant is no faster.
"""

import re

from numba import config, cuda, uint64

from .attention import LN2, NEG_INF, q_scale, set_max_dynamic_shared
from .matmul import _unrolled, compile_source


def make_flash_v7(D=64, BQ=256, BKV=64, TX=8, TY=32, CAUSAL=False, UNROLL=4, PAIRS=False, OFFSET=0):
    """Version 6 (see ``make_flash_v6``) with heaviest-first block order, optional pairing, and any N;
    ``OFFSET`` (0 or -1, causal only) the diagonal of the causal mask: key j counts for query i when
    j <= i + OFFSET."""
    NT = TX * TY
    RM, CS, CO = BQ // TY, BKV // TX, D // TX
    QSTR, KSTR = BQ + 4, BKV + 4
    KBUF, VBUF = D * KSTR, BKV * D
    OQ, OK = 0, D * QSTR
    OV = OK + 2 * KBUF
    OP = OV + 2 * VBUF
    NFLOAT = OP + BKV * BQ
    FM = min(8, BQ // 4) - 1  # swizzle mask for P's 16-byte chunks
    G = NT // 8  # rows of a K tile covered by one pass of the block
    assert RM * TY == BQ and CS * TX == BKV and CO * TX == D and RM % 4 == 0 and CS % 4 == 0 and CO % 4 == 0
    assert TX & (TX - 1) == 0 and TX <= 32 and NT % 32 == 0 and BKV % G == 0 and D % 8 == 0
    assert (BQ * D) % NT == 0 and (BKV * D) % NT == 0 and D % UNROLL == 0 and BKV % UNROLL == 0
    PAIRS = PAIRS and CAUSAL
    assert OFFSET in (0, -1) and (CAUSAL or OFFSET == 0)
    EMPTY_ROWS = OFFSET < 0  # a query row may see no key: guard its max, sum and logsumexp
    align = "" if config.ENABLE_CUDASIM else ", alignment=16"
    RI, JS, JO = range(RM), range(CS), range(CO)
    rows = [(i // 4) * 4 * TY + i % 4 for i in RI]  # + 4*ty
    scol = [(j // 4) * 4 * TX + j % 4 for j in JS]  # + 4*tx
    ocol = [(j // 4) * 4 * TX + j % 4 for j in JO]  # + 4*tx
    LK = (BKV * D) // NT
    kr = [G * (p % (BKV // G)) for p in range(LK)]
    kc = [8 * (p // (BKV // G)) for p in range(LK)]
    shifts = [1 << s for s in range(TX.bit_length() - 1)]

    def mx(names):
        while len(names) > 1:
            names = [f"max({a}, {b})" for a, b in zip(names[::2], names[1::2], strict=False)] + names[
                len(names) & ~1 :
            ]
        return names[0]

    def generate(even):
        """Kernel source; ``even`` (N a multiple of BQ, NK of BKV) leaves out every bounds check."""

        def fetch(row0):
            """Global loads of one K/V tile into registers: one base index plus constants (when not even,
            a tile that runs past NK takes a second path, with its rows clamped to NK - 1)."""
            out = ["if True:" if even else f"if {row0} + BKV <= NK:"]
            out += [f"    kb = (bh * NK + {row0} + g) * D + e", f"    vb = (bh * NK + {row0}) * D + tid"]
            out += [f"    pk{p} = K[U(kb + {kr[p] * D + kc[p]})]" for p in range(LK)]
            out += [f"    pv{p} = V[U(vb + {NT * p})]" for p in range(LK)]
            if even:
                return [line[4:] for line in out[1:]]
            out += ["else:  # the last tile of a ragged NK"]
            out += [f"    pk{p} = K[U((bh * NK + min({row0} + g + {kr[p]}, NK - 1)) * D + e + {kc[p]})]"
                    for p in range(LK)]
            out += [f"    pv{p} = V[U((bh * NK + min({row0} + ((tid + {NT * p}) // D), NK - 1)) * D"
                    f" + (tid + {NT * p}) % D)]" for p in range(LK)]
            return out

        def store(buf):
            out = [f"sm[{OK} + {buf} * {KBUF} + (e + {kc[p]}) * {KSTR} + g + {kr[p]}] = pk{p}"
                   for p in range(LK)]
            out += [f"sm[{OV} + {buf} * {VBUF} + tid + {NT * p}] = pv{p}" for p in range(LK)]
            return out

        head = [
            f"sm = cuda.shared.array(0, float32{align})  # all buffers, carved out by offset",
            "tid = cuda.threadIdx.x",
            "lane = tid & (TX - 1)",
            "tx4 = lane * 4",
            "ty = tid // TX",
            "ty4 = ty * 4",
            "g = tid >> 3",
            "e = tid & 7",
            "bh = cuda.blockIdx.x  # heads innermost: every head's heaviest block starts in the first wave",
            "N = Q.shape[1]",
            "nqb = (N + BQ - 1) // BQ",
            "nkt = (NK + BKV - 1) // BKV  # NK: rows of K and V (N unless a ring block is cut)",
        ]
        if PAIRS:
            head += ["for half in range(2):  # query blocks nqb-1-y, then y: the same work for every block"]
            head += ["    qb = nqb - 1 - cuda.blockIdx.y if half == 0 else cuda.blockIdx.y"]
            head += ["    if half == 0 or qb < nqb - 1 - cuda.blockIdx.y:"]
            pad = "        "
        else:
            head += ["qb = nqb - 1 - cuda.blockIdx.y  # the last (heaviest) query blocks first" if CAUSAL
                     else "qb = cuda.blockIdx.y"]
            pad = ""
        qrow = "q0 + r" if even else "min(q0 + r, N - 1)"
        b = [
            "q0 = qb * BQ",
            f"for p in range({(BQ * D) // NT}):  # Q tile, transposed and scaled once (rows past N: row N-1)",
            f"    idx = tid + {NT} * p",
            f"    r = (idx >> 3) % {BQ}",
            f"    d = ((idx >> 3) // {BQ}) * 8 + (idx & 7)",
            f"    sm[{OQ} + d * {QSTR} + r] = Q[bh, {qrow}, d] * qscale",
        ]
        b += fetch("0") + store("0") + ["cuda.syncthreads()  # Q and the first K/V tile are in"]
        b += [f"fs{j // 4} = ({(j // 4) * TX} + lane) & {FM}  # P swizzle of my kv chunk" for j in JS[::4]]
        b += [f"m{i} = NEG_INF" for i in RI] + [f"l{i} = float32(0.0)" for i in RI]
        b += [f"o{i}_{j} = float32(0.0)" for i in RI for j in JO]
        b += [f"ntiles = min((q0 + BQ + {OFFSET} + BKV - 1) // BKV, nkt)" if CAUSAL else "ntiles = nkt"]
        b += ["for t in range(ntiles):"]
        t = [
            "kv0 = t * BKV",
            "cur = t & 1",
            f"ok = {OK} + cur * {KBUF}",
            f"ov = {OV} + cur * {VBUF}",
        ]
        t += [f"s{i}_{j} = float32(0.0)" for i in RI for j in JS]
        t += [f"for d0 in range(0, D, {UNROLL}):  # S = Q K^T"]
        for u in range(UNROLL):
            t += [f"    a{i}_{u} = sm[{OQ} + (d0 + {u}) * {QSTR} + ty4 + {rows[i]}]" for i in RI]
            t += [f"    b{j}_{u} = sm[ok + (d0 + {u}) * {KSTR} + tx4 + {scol[j]}]" for j in JS]
        for u in range(UNROLL):
            t += [f"    s{i}_{j} += a{i}_{u} * b{j}_{u}" for i in RI for j in JS]
        shift = f" - {-OFFSET}" if OFFSET else ""  # the diagonal, moved by OFFSET
        if CAUSAL:  # keys past N lie after every stored query: the causal mask covers them
            t += [f"if kv0 + BKV - 1 > q0{shift}:  # tile crosses the diagonal: mask keys after the query"]
            t += [
                f"    if kv0 + tx4 + {scol[j]} > q0 + ty4 + {rows[i]}{shift}:\n        s{i}_{j} = NEG_INF"
                for i in RI
                for j in JS
            ]
        elif not even:
            t += ["if kv0 + BKV > NK:  # the last tile of a ragged NK: mask keys past NK"]
            t += [f"    if kv0 + tx4 + {scol[j]} >= NK:" + "".join(f"\n        s{i}_{j} = NEG_INF"
                                                                for i in RI) for j in JS]
        for i in RI:
            t += [f"mn{i} = {mx([f's{i}_{j}' for j in JS])}"]
            t += [f"mn{i} = max(mn{i}, cuda.shfl_xor_sync(FULL, mn{i}, {sh}))" for sh in shifts]
            t += [f"mn{i} = max(mn{i}, m{i})"]
        for i in RI:
            base = f"mn{i}"
            if EMPTY_ROWS:  # no key yet: exponents against 0, so that exp2(-inf) = 0 rather than NaN
                base = f"mz{i}"
                t += [f"mz{i} = mn{i} if mn{i} > NEG_INF else float32(0.0)"]
            t += [f"al{i} = math.exp2(m{i} - {base})", f"m{i} = mn{i}", f"l{i} *= al{i}"]
            t += [f"o{i}_{j} *= al{i}" for j in JO]
            for j in JS:
                chunk = f"(({(i // 4) * TY} + ty) ^ fs{j // 4})"
                t += [f"s{i}_{j} = math.exp2(s{i}_{j} - {base})", f"l{i} += s{i}_{j}"]
                t += [f"sm[{OP} + (tx4 + {scol[j]}) * BQ + {chunk} * 4 + {i % 4}] = s{i}_{j}"]
        t += ["cuda.syncwarp()  # my warp's rows of P are complete (only this warp reads them)"]
        t += ["kvn = min(t + 1, ntiles - 1) * BKV  # next tile (the last one reloads itself)"]
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
        t += store("(1 - cur)")
        t += ["cuda.syncthreads()  # next K/V stored; this tile's K, V, P reads done"]
        b += ["    " + line for line in "\n".join(t).split("\n")]
        for i in RI:
            b += [f"l{i} += cuda.shfl_xor_sync(FULL, l{i}, {sh})" for sh in shifts]
            guard = [] if even else [f"if q0 + ty4 + {rows[i]} < N:"]
            ind = "" if even else "    "
            if EMPTY_ROWS:  # a row that saw no key: O = 0, logsumexp = -inf
                b += guard + [ind + f"inv = float32(1.0) / l{i} if l{i} > float32(0.0) else float32(0.0)"]
                lse = f"(m{i} + math.log2(l{i})) * LN2 if l{i} > float32(0.0) else NEG_INF"
            else:
                b += guard + [ind + f"inv = float32(1.0) / l{i}"]
                lse = f"(m{i} + math.log2(l{i})) * LN2"
            b += [ind + f"O[bh, q0 + ty4 + {rows[i]}, tx4 + {ocol[j]}] = o{i}_{j} * inv" for j in JO]
            b += [ind + "if lane == 0:"]
            b += [ind + f"    L[bh, q0 + ty4 + {rows[i]}] = {lse}"]
        body = head + [pad + line for line in "\n".join(b).split("\n")]
        src = "def flash_v7(Q, K, V, O, L, qscale, NK):  # noqa: E741\n" + _unrolled(body, 4) + "\n"
        src = re.sub(r"sm\[([^\]]*)\]", r"sm[U(\1)]", src)  # unsigned shared indices, as in version 4
        return src

    consts = dict(D=D, BQ=BQ, BKV=BKV, TX=TX, NEG_INF=NEG_INF, LN2=LN2, U=uint64, FULL=0xFFFFFFFF)
    kernels = {even: cuda.jit(compile_source(generate(even), "flash_v7", consts)) for even in (True, False)}
    nbytes = 4 * NFLOAT
    ready = []

    def grid(BH, N):
        nqb = -(-N // BQ)
        return (BH, (nqb + 1) // 2 if PAIRS else nqb)

    def launch(Q, K, V, O, L, wrap=None):  # noqa: E741
        """Run the kernel for Q of (BH, N, D) and K, V of (BH, NK, D); ``wrap`` (e.g. ``gpusim.jit``)
        replaces it first. Returns the launched kernel."""
        BH, N, _ = Q.shape
        NK = K.shape[1]
        assert Q.shape[2] == D and K.shape == V.shape == (BH, NK, D)
        assert NK == N or not CAUSAL, "causal attention takes as many keys as queries"
        args = (Q, K.reshape(BH * NK * D), V.reshape(BH * NK * D), O, L, q_scale(D), NK)  # K, V flat
        even = N % BQ == 0 and NK % BKV == 0
        kernel = kernels[even]
        if even not in ready and not wrap:
            set_max_dynamic_shared(kernel, args, nbytes)
            ready.append(even)
        launched = wrap(kernel) if wrap else kernel
        launched[grid(BH, N), NT, 0, nbytes](*args)
        return launched

    launch.kernel = kernels[True]  # the one the benchmark's shapes run
    launch.kernels = kernels
    launch.source = {even: kernel.py_func.generated_source for even, kernel in kernels.items()}
    launch.shared_bytes = nbytes
    launch.grid = grid
    return launch
