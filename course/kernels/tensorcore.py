"""Matrix multiplication on tensor cores from Numba: C (float32) = A @ B with A, B in bfloat16, row-major.

Numba has no tensor-core API, so the few instructions that reach the tensor cores live in ``mma.cu``
(short CUDA C++ functions with inline PTX), declared here with ``cuda.declare_device`` and linked into the
Numba kernels; link-time optimisation inlines them.  Everything else -- tiling, indexing, the pipeline --
is Python, generated as straight-line source like ``matmul.make_regtile_matmul``.

Both factories use blocks of BM x BN outputs, K steps of BK, and warps of WM x WN outputs made of
16 x 8 tiles, each lane holding 4 fp32 accumulators per tile (the m16n8k16 fragment layout, see mma.cu).

13. ``make_mma_matmul_simple``  the probe's design: Numba copies tiles global -> shared (bf16 pairs as
    int32), every lane reads its fragments with 32-bit shared loads, packing B's k-pairs with bit
    operations; only ``mma.sync`` is linked.  Under the simulator flag the declaration is a stand-in, and
    gpusim runs this kernel on the CPU with a NumPy model of the instruction.
14+ ``make_mma_matmul``  ``cp.async`` copies global -> shared without registers, ``ldmatrix`` loads four
    8x8 fragments per instruction (``.trans`` turns row-major B into the "col" fragments: no transposed
    copy of B anywhere), and STAGES shared buffers (1 = load, wait, compute; >= 2 a pipeline with one
    barrier per K step).
"""

import os
from dataclasses import dataclass

import numpy as np
from numba import config, cuda, int32, uint64

from .attention import set_max_dynamic_shared
from .matmul import _unrolled, compile_source

MMA_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mma.cu")


@dataclass(frozen=True)
class DeclaredDevice:
    """What ``declare`` gives under a simulator, where nothing can be linked: the name and signature of
    the device function (gpusim runs a NumPy model registered under that name)."""

    name: str
    signature: str


def declare(name, signature):
    """A device function of mma.cu, declared for Numba (or its name, under a simulator)."""
    if config.ENABLE_CUDASIM:
        return DeclaredDevice(name, signature)
    return cuda.declare_device(name, signature, link=[MMA_CU])


FRAGMENTS4 = "UniTuple(int32, 4)"
mma_bf16_16816 = declare(
    "mma_bf16_16816", "UniTuple(float32, 4)(int32, int32, int32, int32, int32, int32, "
    "float32, float32, float32, float32)")
ldmatrix_x4 = declare("ldmatrix_x4", f"{FRAGMENTS4}(int32)")
ldmatrix_x4_trans = declare("ldmatrix_x4_trans", f"{FRAGMENTS4}(int32)")
cp_async16 = declare("cp_async16", "int32(int32, uint64)")
cp_async_commit = declare("cp_async_commit", "int32()")
cp_async_wait = [declare(f"cp_async_wait_{n}", "int32()") for n in range(3)]
pack_bf16x2 = declare("pack_bf16x2", "int32(float32, float32)")

LINKED = dict(mma=mma_bf16_16816, ldsm=ldmatrix_x4, ldsm_t=ldmatrix_x4_trans, cp_async=cp_async16,
              commit=cp_async_commit, wait0=cp_async_wait[0], wait1=cp_async_wait[1], wait2=cp_async_wait[2],
              pack=pack_bf16x2)


def _warp_layout(BM, BN, WM, WN):
    assert BM % WM == 0 and BN % WN == 0 and WM % 16 == 0 and WN % 16 == 0
    return BN // WN, (BM // WM) * (BN // WN) * 32  # warps along n, threads


def _mma_lines(MT, NT8, a="a", b="b"):
    """One m16n8k16 product per (m tile i, n tile j) of the warp, from fragments a{i}_*, b{j}_*."""
    out = []
    for i in range(MT):
        for j in range(NT8):
            c = ", ".join(f"c{i}_{j}_{r}" for r in range(4))
            ai = ", ".join(f"{a}{i}_{r}" for r in range(4))
            out.append(f"{c} = mma({ai}, {b}{j}_0, {b}{j}_1, {c})")
    return out


def _epilogue(MT, NT8):
    """Lane 4g + t holds rows g and g + 8, columns 2t and 2t + 1 of each 16 x 8 tile."""
    out = []
    for i in range(MT):
        for j in range(NT8):
            out += [f"row = m0 + wm + {16 * i} + g", f"col = n0 + wn + {8 * j} + 2 * t",
                    f"C[row, col] = c{i}_{j}_0", f"C[row, col + 1] = c{i}_{j}_1",
                    f"C[row + 8, col] = c{i}_{j}_2", f"C[row + 8, col + 1] = c{i}_{j}_3"]
    return out


def _prologue(BM, BN, WM, WN, MT, NT8, grouped=0):
    """Thread, lane and warp coordinates, the block's first row m0 and column n0, zeroed accumulators.
    grouped=G: a 1-D grid walks the output tiles G block-rows at a time, column by column, so that the
    blocks running together share rows of A and columns of B in L2 (G=0: a 2-D grid, row by row)."""
    WARPS_N, _ = _warp_layout(BM, BN, WM, WN)
    if grouped:
        where = ["pid = cuda.blockIdx.x", f"width = {grouped} * (C.shape[1] // {BN})",
                 f"m0 = ((pid // width) * {grouped} + (pid % width) % {grouped}) * {BM}",
                 f"n0 = ((pid % width) // {grouped}) * {BN}"]
    else:
        where = [f"m0 = cuda.blockIdx.y * {BM}", f"n0 = cuda.blockIdx.x * {BN}"]
    return [
        "tid = cuda.threadIdx.x",
        "lane = tid & 31",
        "warp = tid >> 5",
        "g = lane >> 2  # the mma fragment's row group",
        "t = lane & 3  # and thread in the group",
        f"wm = (warp // {WARPS_N}) * {WM}",
        f"wn = (warp % {WARPS_N}) * {WN}",
    ] + where + [f"c{i}_{j}_{r} = float32(0.0)" for i in range(MT) for j in range(NT8) for r in range(4)]


def _launcher(kernel, BM, BN, NT, args_of, shared_bytes=0, grouped=0):
    ready = []

    def launch(A, B, C):
        """C = A @ B for (M, K) and (K, N) bfloat16 arrays A, B (PyTorch CUDA tensors) and float32 C."""
        M, N = C.shape
        assert M % BM == 0 and N % BN == 0 and (M // BM) % max(grouped, 1) == 0
        args = args_of(A, B, C)
        if not ready:
            set_max_dynamic_shared(kernel, args, shared_bytes)
            ready.append(True)
        grid = ((N // BN) * (M // BM),) if grouped else (N // BN, M // BM)
        kernel[grid, NT, 0, shared_bytes](*args)

    launch.kernel = kernel
    launch.threads = NT
    launch.shared_bytes = shared_bytes
    return launch


def _cached(convert):
    """convert(A, B, C) once per distinct (A, B, C): per-call conversions would show in the timings."""
    cache = {}

    def args_of(A, B, C):
        key = (A.data_ptr(), B.data_ptr(), C.data_ptr(), tuple(A.shape), tuple(B.shape))
        if key not in cache:
            cache[key] = convert(A, B, C)
        return cache[key]

    return args_of


def make_mma_matmul_simple(BM=128, BN=128, BK=32, WM=64, WN=32, max_registers=None):
    """Version 13: tiles through Numba's shared arrays, fragments by 32-bit loads, mma.sync linked.

    The kernel takes A and B as int32 arrays of bf16 pairs -- A (M, K/2), B (K, N/2), what
    ``tensor.view(torch.int32)`` gives -- and C (M, N) float32.  A's fragments are pairs along k, stored
    together: one load each.  B's "col" fragments pair two k rows of one column, which row-major B stores
    in two different words: two loads and a few bit operations per register (the cost ldmatrix.trans
    removes in version 14).  Row padding of 4 words keeps the fragment loads free of bank conflicts.
    """
    WARPS_N, NT = _warp_layout(BM, BN, WM, WN)
    MT, NT8 = WM // 16, WN // 8
    AW, BW = BK // 2, BN // 2  # words per row of the A and B tiles
    LA, LB = (BM * AW) // NT, (BK * BW) // NT
    assert LA * NT == BM * AW and LB * NT == BK * BW and BK % 16 == 0
    b = [f"sA = cuda.shared.array(({BM}, {AW + 4}), int32)",
         f"sB = cuda.shared.array(({BK}, {BW + 4}), int32)"]
    b += _prologue(BM, BN, WM, WN, MT, NT8)
    b += ["sel = (g & 1) * 16  # my column's half of each B word", "K2 = A.shape[1]",
          f"for k2 in range(0, K2, {AW}):"]
    t = []
    for p in range(LA):
        t += [f"idx = tid + {NT * p}", f"sA[idx // {AW}, idx % {AW}] = A[m0 + idx // {AW}, k2 + idx % {AW}]"]
    for p in range(LB):
        t += [f"idx = tid + {NT * p}",
              f"sB[idx // {BW}, idx % {BW}] = B[2 * k2 + idx // {BW}, n0 // 2 + idx % {BW}]"]
    t += ["cuda.syncthreads()"]
    for ks in range(BK // 16):
        for i in range(MT):
            r = f"wm + {16 * i} + g"
            t += [f"a{i}_0 = sA[{r}, {8 * ks} + t]", f"a{i}_1 = sA[{r} + 8, {8 * ks} + t]",
                  f"a{i}_2 = sA[{r}, {8 * ks + 4} + t]", f"a{i}_3 = sA[{r} + 8, {8 * ks + 4} + t]"]
        for j in range(NT8):
            col = f"(wn + {8 * j}) // 2 + (g >> 1)"
            for half in range(2):
                k = f"{16 * ks + 8 * half} + 2 * t"
                t += [f"lo = sB[{k}, {col}]", f"hi = sB[{k} + 1, {col}]",
                      f"b{j}_{half} = int32(((lo >> sel) & 0xFFFF) | (((hi >> sel) & 0xFFFF) << 16))"]
        t += _mma_lines(MT, NT8)
    t += ["cuda.syncthreads()"]
    b += ["    " + line for line in t]
    b += _epilogue(MT, NT8)
    src = "def mma_simple(A, B, C):\n" + _unrolled(b, 4) + "\n"
    opts = {} if max_registers is None else {"max_registers": max_registers}
    fn = compile_source(src, "mma_simple", dict(int32=int32, mma=mma_bf16_16816))
    kernel = fn if config.ENABLE_CUDASIM else cuda.jit(fn, **opts)

    def int32_views(A, B, C):
        import torch

        return tuple(cuda.as_cuda_array(x) for x in (A.view(torch.int32), B.view(torch.int32), C))

    launch = _launcher(kernel, BM, BN, NT, _cached(int32_views))
    launch.source = src
    return launch


def make_mma_matmul(BM=128, BN=128, BK=32, WM=64, WN=32, STAGES=3, max_registers=None, PREFETCH=False,
                    GROUP=0, LOADS=True):
    """Versions 14 and up: cp.async into STAGES shared buffers, ldmatrix fragments, mma.sync.

    Dynamic shared memory per stage: the A tile (BM rows of BK bf16, padded by 8 bf16 = 16 bytes so that
    the 8 rows one ldmatrix matrix reads fall in 8 different 16-byte bank groups) and the B tile (BK rows
    of BN bf16, padded likewise).  The kernel takes the addresses of A and B (``tensor.data_ptr()``) and
    K, with C as a float32 array.  Pipeline with STAGES >= 2 (one barrier per K step):

        issue the copies of tiles 0 .. STAGES-2
        for each K step kt:  wait until tile kt has landed (mine), barrier (everyone's; and everyone is
        done reading the buffer that tile kt + STAGES - 1 goes to), issue that tile's copies, compute kt.
    """
    WARPS_N, NT = _warp_layout(BM, BN, WM, WN)
    MT, NT8 = WM // 16, WN // 8
    PA, PB = (BK + 8) * 2, (BN + 8) * 2  # row pitches in bytes
    A_BYTES, B_BYTES = BM * PA, BK * PB
    STAGE = A_BYTES + B_BYTES
    CA, CB = BK // 8, BN // 8  # 16-byte chunks per row
    LA, LB = (BM * CA) // NT, (BK * CB) // NT
    assert LA * NT == BM * CA and LB * NT == BK * CB and BK % 16 == 0 and 1 <= STAGES <= 4
    b = _prologue(BM, BN, WM, WN, MT, NT8, grouped=GROUP)
    b += ["N = C.shape[1]", f"KT = K // {BK}"]
    for p in range(LA):  # this thread's chunks of the A tile: fixed row and column, K step added per tile
        b += [f"r = (tid + {NT * p}) // {CA}", f"q = (tid + {NT * p}) % {CA}",
              f"ga{p} = a_ptr + U(((m0 + r) * K + q * 8) * 2)", f"sa{p} = r * {PA} + q * 16"]
    for p in range(LB):
        b += [f"r = (tid + {NT * p}) // {CB}", f"q = (tid + {NT * p}) % {CB}",
              f"gb{p} = b_ptr + U((r * N + n0 + q * 8) * 2)", f"sb{p} = {A_BYTES} + r * {PB} + q * 16"]
    b += [f"alane = (wm + (lane & 15)) * {PA} + (lane >> 4) * 16  # my row of an ldmatrix A quadrant",
          f"blane = {A_BYTES} + (lane & 15) * {PB} + (wn + (lane >> 4) * 8) * 2  # my row of a B pair"]

    def load(tile, stage):
        out = [f"_ = cp_async(I32({stage} + sa{p}), ga{p} + U({tile} * {BK * 2}))" for p in range(LA)]
        out += [f"_ = cp_async(I32({stage} + sb{p}), gb{p} + U({tile} * {BK * 2} * N))" for p in range(LB)]
        return out

    def fragments(stage, ks, a, b):
        out = [f"{a}{i}_0, {a}{i}_1, {a}{i}_2, {a}{i}_3 = "
               f"ldsm(I32({stage} + alane + {16 * i * PA + 32 * ks}))" for i in range(MT)]
        out += [f"{b}{2 * jj}_0, {b}{2 * jj}_1, {b}{2 * jj + 1}_0, {b}{2 * jj + 1}_1 = "
                f"ldsm_t(I32({stage} + blane + {16 * ks * PB + 32 * jj}))" for jj in range(NT8 // 2)]
        return out

    def compute(stage):
        """The BK // 16 steps of one K tile; PREFETCH: step ks + 1's fragments (a second register set)
        are loaded before step ks's products, so the loads are in flight during them."""
        steps = range(BK // 16)
        if not PREFETCH:
            return [line for ks in steps for line in fragments(stage, ks, "a", "b") + _mma_lines(MT, NT8)]
        names = [("a", "b"), ("p", "q")]
        out = fragments(stage, 0, *names[0])
        for ks in steps:
            if ks + 1 in steps:
                out += fragments(stage, ks + 1, *names[(ks + 1) % 2])
            out += _mma_lines(MT, NT8, *names[ks % 2])
        return out

    if STAGES == 1:
        t = load("kt", "0") + ["_ = commit()", "_ = wait0()", "cuda.syncthreads()"] + compute("0")
        t += ["cuda.syncthreads()  # everyone is done with the buffer before the next copies"]
        b += ["for kt in range(KT):"] + ["    " + line for line in t]
    else:
        for s in range(STAGES - 1):
            b += [f"if {s} < KT:"] + ["    " + line for line in load(str(s), str(s * STAGE))]
            b += ["_ = commit()"]
        t = [f"_ = wait{STAGES - 2}()  # my copies of tile kt have landed",
             "cuda.syncthreads()  # everyone's have; everyone is done with tile kt - 1's buffer",
             f"nk = kt + {STAGES - 1}",
             "if nk < KT:"]
        if LOADS:  # LOADS=False (a diagnostic, wrong results): the K loop reuses the first tiles
            t += ["    " + line for line in load("nk", f"(nk % {STAGES}) * {STAGE}")]
        else:
            t += ["    pass"]
        t += ["_ = commit()  # (an empty group near the end keeps the count uniform)",
              f"st = (kt % {STAGES}) * {STAGE}"]
        t += compute("st")
        b += ["for kt in range(KT):"] + ["    " + line for line in t]
    b += _epilogue(MT, NT8)
    src = "def mma_pipe(a_ptr, b_ptr, C, K):\n" + _unrolled(b, 4) + "\n"
    consts = dict(LINKED, U=uint64, I32=int32)
    opts = {} if max_registers is None else {"max_registers": max_registers}
    kernel = cuda.jit(compile_source(src, "mma_pipe", consts), **opts)
    shared = STAGES * STAGE

    def addresses(A, B, C):
        # uint64 addresses: a Python int would be typed int64, and int64 + uint64 is float64 in Numba
        return (np.uint64(A.data_ptr()), np.uint64(B.data_ptr()), cuda.as_cuda_array(C), A.shape[1])

    launch = _launcher(kernel, BM, BN, NT, _cached(addresses), shared, GROUP)
    launch.source = src
    return launch


def make_mma_peak(CHAINS=8, ITERS=1024):
    """The instruction's own ceiling: every warp issues CHAINS independent chains of ITERS mma.sync on
    register operands, no memory traffic.  launch(out) runs it on every SM; launch.flops is its work."""
    c = [[f"c{k}_{r}" for r in range(4)] for k in range(CHAINS)]
    b = ["x = int32(0x3C003C00 + (cuda.threadIdx.x & 31))  # two small bf16 numbers"]
    b += [f"{name} = float32(0.0)" for chain in c for name in chain]
    b += [f"for it in range({ITERS}):"]
    b += [f"    {', '.join(chain)} = mma(x, x, x, x, x, x, {', '.join(chain)})" for chain in c]
    b += ["out[cuda.grid(1)] = " + " + ".join(name for chain in c for name in chain)]
    src = "def mma_peak(out):\n" + _unrolled(b, 4) + "\n"
    kernel = cuda.jit(compile_source(src, "mma_peak", dict(int32=int32, mma=mma_bf16_16816)))
    blocks, threads = 132 * 8, 256

    def launch(out):
        kernel[blocks, threads](out)

    launch.kernel = kernel
    launch.threads = blocks * threads
    launch.flops = blocks * (threads // 32) * CHAINS * ITERS * 2 * 16 * 8 * 16
    return launch
