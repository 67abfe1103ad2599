"""Hopper's tensor cores from Numba: C (float32) = A @ Bᵀ with A (M, K) and B (N, K) in bfloat16, both
row-major, so that K is contiguous in both -- the layout of a linear layer's weight, and the one ``wgmma``
reads without transposing ("K-major").

Versions 18 and up replace ``mma.sync`` (a warp, operands in registers) with ``wgmma.mma_async`` (a
*warpgroup* of four warps; both operands read by the tensor cores straight from shared memory through
64-bit *matrix descriptors*; the product runs asynchronously while the warps go on).  As in
``tensorcore.py``, the few instructions Numba has no name for live in CUDA C++ functions (generated below,
:func:`source`) that Numba compiles with NVRTC and links; link-time optimisation inlines them.
Everything else -- tiling, the pipeline, who does what -- is Python, generated as straight-line source.

Shared-memory layout (both versions): a tile of R rows of BK = 64 bf16 is R rows of 128 bytes, in 1024-byte
"swizzle atoms" of 8 rows; the 16-byte chunk c of row r sits at chunk c XOR (r mod 8) of its row
(:func:`swizzled_offset`).  That is the PTX ISA's 128-byte swizzle: the eight rows that one tensor-core
read touches, or one TMA write, fall in eight different bank groups.  A descriptor names the tile's first
byte, the 1024-byte step between atoms and the swizzle mode; stepping K by 16 within the 128-byte row is
32 bytes added to the start address (:func:`descriptor_fields`).

18. ``make_wgmma_matmul(loads="cp.async")``: every thread copies 16-byte chunks with ``cp.async`` into the
    swizzled layout, STAGES buffers (one barrier per K step, as version 15), two warpgroups each computing
    64 x BN with ``wgmma.m64nBNk16``; a K tile's products stay in flight while the next one's are issued.
19. ``make_wgmma_matmul(loads="tma")``: a third warpgroup only moves data: one thread issues TMA bulk
    tensor copies (``cp.async.bulk.tensor``, 128-byte swizzle done by the copy engine) that complete on
    *mbarriers* with a transaction count; the two consumer warpgroups wait on the "full" barrier of a
    stage, multiply, and arrive on its "empty" barrier; ``setmaxnreg`` moves registers from the producer
    to the consumers.
20. ``make_wgmma_matmul(loads="tma", persistent=True)``: one block per SM walks the output tiles, the stage
    counter running on across them, so the next tile's copies overlap this tile's stores.
"""

import ctypes

import numpy as np
from numba import config, cuda, int32, uint64

from gpusim import WgmmaDescriptor

from .attention import set_max_dynamic_shared
from .matmul import _unrolled, compile_source

BK = 64  # bf16 per row of a tile: one 128-byte swizzle row
ROW_BYTES = 128
ATOM_BYTES = 1024  # 8 rows of 128 bytes


# ------------------------------------------------------------------------------------ the layout, on the CPU


def swizzled_offset(row: int, chunk: int) -> int:
    """Byte offset in a tile of the 16-byte chunk ``chunk`` (0..7) of row ``row``: 128-byte swizzle."""
    return row * ROW_BYTES + ((chunk ^ (row % 8)) * 16)


def descriptor_fields(tile_start: int, k_step: int) -> WgmmaDescriptor:
    """The descriptor the kernels build (``sw128_descriptor`` below) for the K step ``k_step`` (0..3) of a
    K-major tile at byte ``tile_start``: 32 bytes further along the rows per step, 1024 bytes between 8-row
    atoms, 128-byte swizzle. gpusim's ``wgmma_operand`` reads through it as the PTX ISA defines."""
    return WgmmaDescriptor(tile_start + 32 * k_step, 16, ATOM_BYTES, 1)


def v_descriptor_fields(tile_start: int, k_step: int) -> WgmmaDescriptor:
    """The descriptor of the attention's V tile (``sw128_mn_descriptor``), MN-major: 16 keys are two atoms
    of 8 key rows, so a K step is 2048 bytes; both byte offsets are 1024."""
    return WgmmaDescriptor(tile_start + 2048 * k_step, ATOM_BYTES, ATOM_BYTES, 1)


# ---------------------------------------------------------------------------------------- the CUDA C++ side

HEADER = r"""
extern __shared__ __align__(1024) unsigned char dynamic_shared[];

// Shared-window address of byte `offset` of the dynamic shared memory, rounded up to 1024 bytes first:
// the 128-byte swizzle is a function of address bits 4-9, so each tile must start on an atom.
__device__ __forceinline__ unsigned shared_at(int offset) {
  unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(dynamic_shared));
  return ((base + 1023u) & ~1023u) + offset;
}

__device__ __forceinline__ unsigned long long sw128_descriptor(int offset) {
  unsigned address = shared_at(offset);
  return (unsigned long long)((address & 0x3FFFF) >> 4) | (1ull << 16)
       | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

extern "C" __device__ int hp_cp_async16(int* r, int offset, unsigned long long global_address) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(shared_at(offset)), "l"(global_address)
               : "memory");
  *r = 0; return 0;
}
extern "C" __device__ int hp_cp_async_commit(int* r) {
  asm volatile("cp.async.commit_group;\n" ::: "memory"); *r = 0; return 0;
}
extern "C" __device__ int hp_cp_async_wait(int* r, int pending) {
  if (pending == 0) asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  else if (pending == 1) asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  else asm volatile("cp.async.wait_group 2;\n" ::: "memory");
  *r = 0; return 0;
}

// Writes of the generic proxy (threads, cp.async) made visible to the async proxy (wgmma, TMA).
extern "C" __device__ int hp_fence_proxy_async(int* r) {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); *r = 0; return 0;
}

extern "C" __device__ int hp_wgmma_fence(int* r) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); *r = 0; return 0;
}
extern "C" __device__ int hp_wgmma_commit(int* r) {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); *r = 0; return 0;
}
extern "C" __device__ int hp_wgmma_wait(int* r, int pending) {
  if (pending == 0) asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  else asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  *r = 0; return 0;
}

// mbarriers: 8 bytes of shared memory each, counting arrivals and (with expect_tx) bytes still to land.
extern "C" __device__ int hp_mbar_init(int* r, int offset, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(shared_at(offset)), "r"(count) : "memory");
  *r = 0; return 0;
}
extern "C" __device__ int hp_mbar_init_fence(int* r) {
  asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory");
  *r = 0; return 0;
}
extern "C" __device__ int hp_mbar_expect_tx(int* r, int offset, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(shared_at(offset)),
               "r"(bytes) : "memory");
  *r = 0; return 0;
}
extern "C" __device__ int hp_mbar_arrive(int* r, int offset) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(shared_at(offset)) : "memory");
  *r = 0; return 0;
}
extern "C" __device__ int hp_mbar_wait(int* r, int offset, int parity) {
  asm volatile("{\n.reg .pred done;\nWAIT:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra WAIT;\n}\n" :: "r"(shared_at(offset)), "r"(parity) : "memory");
  *r = 0; return 0;
}

// TMA: a box of the tensor the map describes, at coordinates (x innermost, y), into shared memory; the
// copy engine applies the map's swizzle and counts the bytes landed on the mbarrier.
extern "C" __device__ int hp_tma_load_2d(int* r, unsigned long long tensor_map, int offset, int barrier,
                                         int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4}], [%2];\n"
               :: "r"(shared_at(offset)), "l"(tensor_map), "r"(shared_at(barrier)), "r"(x), "r"(y)
               : "memory");
  *r = 0; return 0;
}
// A tensor map written to global memory by the host is read by the async proxy: acquire it once.
extern "C" __device__ int hp_tensormap_acquire(int* r, unsigned long long tensor_map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" :: "l"(tensor_map) : "memory");
  *r = 0; return 0;
}
extern "C" __device__ int hp_setmaxnreg_producer(int* r) {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n"); *r = 0; return 0;
}
extern "C" __device__ int hp_setmaxnreg_consumer(int* r) {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n"); *r = 0; return 0;
}
"""


def wgmma_function(n: int) -> str:
    """``hp_wgmma_n{n}``: D += A Bᵀ for A 64 x 16 at byte ``a`` and B n x 16 at byte ``b`` (K-major, 128-byte
    swizzle), issued (not waited for); the n / 2 fp32 accumulators of the thread go in and come out."""
    regs = n // 2
    params = ", ".join(f"float c{i}" for i in range(regs))
    operands = ", ".join(f"%{i}" for i in range(regs))
    outputs = ", ".join(f'"+f"(acc[{i}])' for i in range(regs))
    return rf"""
struct f32x{regs} {{ float v[{regs}]; }};
extern "C" __device__ int hp_wgmma_n{n}(f32x{regs}* d, int a, int b, {params}) {{
  float acc[{regs}] = {{{", ".join(f"c{i}" for i in range(regs))}}};
  asm volatile("{{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %{regs + 2}, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{operands}}}, %{regs}, %{regs + 1}, "
               "accumulate, 1, 1, 0, 0;\n}}\n"
               : {outputs} : "l"(sw128_descriptor(a)), "l"(sw128_descriptor(b)), "r"(1));
  for (int i = 0; i < {regs}; ++i) d->v[i] = acc[i];
  return 0;
}}
"""


REGISTER_A = r"""
// A MN-major operand (N contiguous, as V is stored [key][dim]) with 128-byte swizzle: atoms of 8 K rows of
// 64 bf16; the next 8 rows of K are 1024 bytes on (the stride field), and so is the next 64 along N (the
// leading field; unused when N is 64, one atom wide).
__device__ __forceinline__ unsigned long long sw128_mn_descriptor(int offset) {
  unsigned address = shared_at(offset);
  return (unsigned long long)((address & 0x3FFFF) >> 4) | ((unsigned long long)(1024 >> 4) << 16)
       | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}
// Named barriers 1 and 2 between the two consumer warpgroups (256 threads): one waits for its turn (sync),
// the other hands the turn over (arrive, without waiting).
extern "C" __device__ int hp_named_sync(int* r, int id) {
  asm volatile("bar.sync %0, 256;\n" :: "r"(id) : "memory"); *r = 0; return 0;
}
extern "C" __device__ int hp_named_arrive(int* r, int id) {
  asm volatile("bar.arrive %0, 256;\n" :: "r"(id) : "memory"); *r = 0; return 0;
}
extern "C" __device__ int hp_pack_bf16x2(int* r, float lo, float hi) {
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(*r) : "f"(hi), "f"(lo));
  return 0;
}
"""


def register_a_function(n: int) -> str:
    """``hp_wgmma_rs_n{n}``: D += A B for A 64 x 16 in registers (four bf16x2 per thread: the m16n8k16 A
    fragment of the thread's warp, rows 16 w ..) and B 16 x n in shared memory, MN-major (``imm-trans-b``
    1), at byte ``b``."""
    regs = n // 2
    params = ", ".join(f"float c{i}" for i in range(regs))
    operands = ", ".join(f"%{i}" for i in range(regs))
    outputs = ", ".join(f'"+f"(acc[{i}])' for i in range(regs))
    return rf"""
extern "C" __device__ int hp_wgmma_rs_n{n}(f32x{regs}* d, int a0, int a1, int a2, int a3, int b, {params}) {{
  float acc[{regs}] = {{{", ".join(f"c{i}" for i in range(regs))}}};
  asm volatile("{{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %{regs + 5}, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{operands}}}, "
               "{{%{regs}, %{regs + 1}, %{regs + 2}, %{regs + 3}}}, %{regs + 4}, accumulate, 1, 1, 1;\n}}\n"
               : {outputs} : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(sw128_mn_descriptor(b)), "r"(1));
  for (int i = 0; i < {regs}; ++i) d->v[i] = acc[i];
  return 0;
}}
"""


def source(n_sizes=(64, 128, 256)) -> str:
    """The CUDA C++ that versions 18 and up, and the wgmma attention, link."""
    return HEADER + REGISTER_A + "".join(wgmma_function(n) for n in n_sizes) + register_a_function(64)


class _Declared:
    """The device functions, declared for Numba on first use (NVRTC runs at the first kernel's link)."""

    def __init__(self):
        self._made = None

    def get(self, n):
        if self._made is None:
            link = [cuda.CUSource(source())]
            functions = {  # name in the kernels: (C++ name, Numba signature)
                "cp_async": ("hp_cp_async16", "int32(int32, uint64)"),
                "commit": ("hp_cp_async_commit", "int32()"),
                "cp_wait": ("hp_cp_async_wait", "int32(int32)"),
                "fence_async": ("hp_fence_proxy_async", "int32()"),
                "wg_fence": ("hp_wgmma_fence", "int32()"),
                "wg_commit": ("hp_wgmma_commit", "int32()"),
                "wg_wait": ("hp_wgmma_wait", "int32(int32)"),
                "mbar_init": ("hp_mbar_init", "int32(int32, int32)"),
                "mbar_init_fence": ("hp_mbar_init_fence", "int32()"),
                "expect_tx": ("hp_mbar_expect_tx", "int32(int32, int32)"),
                "arrive": ("hp_mbar_arrive", "int32(int32)"),
                "mbar_wait": ("hp_mbar_wait", "int32(int32, int32)"),
                "tma": ("hp_tma_load_2d", "int32(uint64, int32, int32, int32, int32)"),
                "tmap_acquire": ("hp_tensormap_acquire", "int32(uint64)"),
                "producer_regs": ("hp_setmaxnreg_producer", "int32()"),
                "consumer_regs": ("hp_setmaxnreg_consumer", "int32()"),
            }
            made = {key: cuda.declare_device(name, sig, link=link) for key, (name, sig) in functions.items()}
            made["pack"] = cuda.declare_device("hp_pack_bf16x2", "int32(float32, float32)", link=link)
            made["turn_wait"] = cuda.declare_device("hp_named_sync", "int32(int32)", link=link)
            made["turn_pass"] = cuda.declare_device("hp_named_arrive", "int32(int32)", link=link)
            made["wgmma_rs64"] = cuda.declare_device(
                "hp_wgmma_rs_n64", f"UniTuple(float32, 32)({', '.join(['int32'] * 5 + ['float32'] * 32)})",
                link=link)
            wgmma = {}
            for size in (64, 128, 256):
                args = ", ".join(["int32", "int32"] + ["float32"] * (size // 2))
                result = f"UniTuple(float32, {size // 2})"
                wgmma[size] = cuda.declare_device(f"hp_wgmma_n{size}", f"{result}({args})", link=link)
            self._made = (made, wgmma)
        made, wgmma = self._made
        return dict(made, wgmma=wgmma[n])


DECLARED = _Declared()


# -------------------------------------------------------------------------------------- the Numba kernels


def _grid_lines(BM, BN, GROUP, pid="cuda.blockIdx.x"):
    """m0, n0 of output tile ``pid``, numbered GROUP block-rows at a time, column by column (L2 reuse)."""
    return [f"width = {GROUP} * (C.shape[1] // {BN})",
            f"m0 = (({pid} // width) * {GROUP} + ({pid} % width) % {GROUP}) * {BM}",
            f"n0 = (({pid} % width) // {GROUP}) * {BN}"]


def _accumulators(regs):
    return [f"c{i} = float32(0.0)" for i in range(regs)]


def _wgmma_lines(a_tile, b_tile, regs):
    """The four k16 products of one 64-wide K tile: 32 bytes further along each operand's rows each."""
    acc = ", ".join(f"c{i}" for i in range(regs))
    return [f"{acc} = wgmma(I32({a_tile} + {32 * k}), I32({b_tile} + {32 * k}), {acc})" for k in range(4)]


def _epilogue(regs, row0):
    """Thread (warp w of the warpgroup, lane 4 g + t) holds, for accumulator pair i = 2 j, 2 j + 1:
    row 16 w + g + 8 ((j) % 2), columns 8 (j // 2) + 2 t and + 1 (PTX ISA, wgmma D fragment layout)."""
    out = ["lane = tid & 31", "g = lane >> 2", "t = lane & 3", f"row = {row0} + 16 * ((tid >> 5) & 3) + g"]
    for j in range(regs // 2):
        col = f"n0 + {8 * (j // 2)} + 2 * t"
        row = "row" if j % 2 == 0 else "row + 8"
        out += [f"C[{row}, {col}] = c{2 * j}", f"C[{row}, {col} + 1] = c{2 * j + 1}"]
    return out


def _make_cp_async(BM, BN, STAGES, GROUP):
    """Version 18's kernel source: 2 warpgroups that copy and multiply."""
    NT, regs = 256, BN // 2
    A_BYTES, B_BYTES = BM * ROW_BYTES, BN * ROW_BYTES
    STAGE = A_BYTES + B_BYTES
    LA, LB = BM * 8 // NT, BN * 8 // NT
    assert BM == 128 and STAGES >= 3 and LA * NT == BM * 8 and LB * NT == BN * 8
    b = ["tid = cuda.threadIdx.x", "wg = tid >> 7"] + _grid_lines(BM, BN, GROUP) + ["KT = K // 64"]
    for p in range(LA):  # this thread's chunks: fixed row and chunk, the K tile added per step
        b += [f"r = (tid + {NT * p}) >> 3", f"q = (tid + {NT * p}) & 7",
              f"ga{p} = a_ptr + U(((m0 + r) * K + q * 8) * 2)",
              f"sa{p} = r * 128 + ((q ^ (r & 7)) << 4)"]
    for p in range(LB):
        b += [f"r = (tid + {NT * p}) >> 3", f"q = (tid + {NT * p}) & 7",
              f"gb{p} = b_ptr + U(((n0 + r) * K + q * 8) * 2)",
              f"sb{p} = {A_BYTES} + r * 128 + ((q ^ (r & 7)) << 4)"]
    b += _accumulators(regs)

    def load(tile, stage):
        out = [f"_ = cp_async(I32({stage} + sa{p}), ga{p} + U({tile} * 128))" for p in range(LA)]
        return out + [f"_ = cp_async(I32({stage} + sb{p}), gb{p} + U({tile} * 128))" for p in range(LB)]

    AHEAD = STAGES - 2  # tiles in flight: a buffer is refilled only once its products are done everywhere
    for s in range(AHEAD):
        b += [f"if {s} < KT:"] + ["    " + line for line in load(str(s), str(s * STAGE))] + ["_ = commit()"]
    t = [f"_ = cp_wait({AHEAD - 1})  # my copies of tile kt have landed",
         "_ = fence_async()  # ... and are visible to the tensor cores",
         "cuda.syncthreads()  # everyone's; and tile kt - 2's products are done in both warpgroups",
         f"nk = kt + {AHEAD}", "if nk < KT:"]
    t += ["    " + line for line in load("nk", f"(nk % {STAGES}) * {STAGE}")]
    t += ["_ = commit()", f"st = (kt % {STAGES}) * {STAGE}", "_ = wg_fence()"]
    t += _wgmma_lines(f"st + wg * {64 * ROW_BYTES}", f"st + {A_BYTES}", regs)
    t += ["_ = wg_commit()", "_ = wg_wait(1)  # tile kt - 1's products are done"]
    b += ["for kt in range(KT):"] + ["    " + line for line in t]
    b += ["_ = wg_wait(0)"] + _epilogue(regs, "m0 + 64 * wg")
    return "def wgmma_cp_async(a_ptr, b_ptr, C, K):\n" + _unrolled(b, 4) + "\n", NT, STAGES * STAGE + 1024


def _make_tma(BM, BN, STAGES, GROUP, persistent=False, compute=True):
    """Versions 19 and 20: a producer warpgroup (one thread issues TMA) and two consumers; persistent: a
    block per SM walks the output tiles, and the stage counter ``it`` runs on across them, so the producer
    fills the next tile's stages while the consumers store the last one's results."""
    NT, regs = 384, BN // 2
    A_BYTES, B_BYTES = BM * ROW_BYTES, BN * ROW_BYTES
    STAGE = A_BYTES + B_BYTES
    FULL, EMPTY = STAGES * STAGE, STAGES * STAGE + 8 * STAGES
    assert BM == 128
    b = ["tid = cuda.threadIdx.x", "wg = tid >> 7", "KT = K // 64",
         f"tiles = (C.shape[0] // {BM}) * (C.shape[1] // {BN})"]
    b += ["if tid == 0:"]
    b += [f"    _ = mbar_init({FULL + 8 * s}, 1)" for s in range(STAGES)]
    b += [f"    _ = mbar_init({EMPTY + 8 * s}, 2)  # one arrival per consumer" for s in range(STAGES)]
    b += ["    _ = mbar_init_fence()", "cuda.syncthreads()"]
    walk = ("for tile in range(cuda.blockIdx.x, tiles, cuda.gridDim.x):" if persistent
            else "for tile in range(cuda.blockIdx.x, cuda.blockIdx.x + 1):")
    where = ["    " + line for line in _grid_lines(BM, BN, GROUP, "tile")]
    stage = [f"s = it % {STAGES}", f"full = I32({FULL} + 8 * s)"]
    produce = stage + [
        f"_ = mbar_wait(I32({EMPTY} + 8 * s), I32(((it // {STAGES}) & 1) ^ 1))  # the consumers freed it",
        f"_ = expect_tx(full, {STAGE})",
        f"_ = tma(a_map, I32(s * {STAGE}), full, I32(kt * 64), I32(m0))",
        f"_ = tma(b_map, I32(s * {STAGE} + {A_BYTES}), full, I32(kt * 64), I32(n0))", "it += 1"]
    producer = ["_ = producer_regs()", "if tid == 0:", "    _ = tmap_acquire(a_map)",
                "    _ = tmap_acquire(b_map)", "    it = 0", "    " + walk]
    producer += ["    " + line for line in where]
    producer += ["        for kt in range(KT):"] + ["            " + line for line in produce]
    if not compute:  # diagnostic: the consumers free each stage at once; what TMA alone moves per second
        consume = stage + [f"_ = mbar_wait(full, I32((it // {STAGES}) & 1))", "if (tid & 127) == 0:",
                           f"    _ = arrive(I32({EMPTY} + 8 * s))", "it += 1"]
        consumer = ["w = wg - 1", "it = 0", walk] + where + ["    for kt in range(KT):"]
        consumer += ["        " + line for line in consume]
        b += ["if wg == 0:"] + ["    " + line for line in producer]
        b += ["else:"] + ["    " + line for line in consumer]
        shared = STAGES * STAGE + 16 * STAGES + 1024
        return "def wgmma_tma(a_map, b_map, C, K):\n" + _unrolled(b, 4) + "\n", NT, shared
    consume = stage + [f"_ = mbar_wait(full, I32((it // {STAGES}) & 1))", "_ = wg_fence()"]
    consume += _wgmma_lines(f"s * {STAGE} + w * {64 * ROW_BYTES}", f"s * {STAGE} + {A_BYTES}", regs)
    consume += ["_ = wg_commit()", "_ = wg_wait(1)  # the previous stage's products are done: free it",
                "if kt > 0 and (tid & 127) == 0:",
                f"    _ = arrive(I32({EMPTY} + 8 * ((it + {STAGES - 1}) % {STAGES})))", "it += 1"]
    consumer = ["_ = consumer_regs()", "w = wg - 1", "it = 0", walk] + where
    consumer += ["    " + line for line in _accumulators(regs)]
    consumer += ["    for kt in range(KT):"] + ["        " + line for line in consume]
    consumer += ["    _ = wg_wait(0)", "    if (tid & 127) == 0:",
                 f"        _ = arrive(I32({EMPTY} + 8 * ((it + {STAGES - 1}) % {STAGES})))"]
    consumer += ["    " + line for line in _epilogue(regs, "m0 + 64 * w")]
    b += ["if wg == 0:"] + ["    " + line for line in producer]
    b += ["else:"] + ["    " + line for line in consumer]
    shared = STAGES * STAGE + 16 * STAGES + 1024
    return "def wgmma_tma(a_map, b_map, C, K):\n" + _unrolled(b, 4) + "\n", NT, shared


# ------------------------------------------------------------------------------------- tensor maps (host)

CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9
CU_TENSOR_MAP_SWIZZLE_128B = 3
CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3


def tensor_map(tensor, box_rows: int) -> np.ndarray:
    """The 128-byte CUtensorMap of a row-major (rows, K) bf16 CUDA tensor, for boxes of box_rows x 64, with
    128-byte swizzle, built by the driver's cuTensorMapEncodeTiled (called through ctypes)."""
    rows, k = tensor.shape
    driver = ctypes.CDLL("libcuda.so.1")
    encoded = (ctypes.c_uint64 * 16)()
    dims = (ctypes.c_uint64 * 2)(k, rows)
    strides = (ctypes.c_uint64 * 1)(k * 2)
    box = (ctypes.c_uint32 * 2)(BK, box_rows)
    steps = (ctypes.c_uint32 * 2)(1, 1)
    driver.cuTensorMapEncodeTiled.restype = ctypes.c_int
    status = driver.cuTensorMapEncodeTiled(
        encoded, ctypes.c_int(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16), ctypes.c_uint32(2),
        ctypes.c_void_p(tensor.data_ptr()), dims, strides, box, steps, ctypes.c_int(0),
        ctypes.c_int(CU_TENSOR_MAP_SWIZZLE_128B), ctypes.c_int(CU_TENSOR_MAP_L2_PROMOTION_L2_256B),
        ctypes.c_int(0))
    if status != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled failed with CUresult {status}")
    return np.frombuffer(bytes(encoded), np.uint8).copy()


def make_wgmma_matmul(loads="cp.async", BM=128, BN=256, STAGES=4, GROUP=16, persistent=False, compute=True):
    """launch(A, Bt, C): C = A @ Bt.T for bf16 CUDA tensors A (M, K), Bt (N, K) and float32 C (M, N).
    loads: "cp.async" (version 18) or "tma" (19; 20 with persistent=True)."""
    assert not config.ENABLE_CUDASIM, "wgmma kernels run on a GPU of compute capability 9.0 only"
    if loads == "tma":
        src, NT, shared = _make_tma(BM, BN, STAGES, GROUP, persistent, compute)
    else:
        src, NT, shared = _make_cp_async(BM, BN, STAGES, GROUP)
    name = src.split("(")[0][4:]
    consts = dict(DECLARED.get(BN), U=uint64, I32=int32)
    opts = {"max_registers": 168} if loads == "tma" else {}
    kernel = cuda.jit(compile_source(src, name, consts), **opts)
    cache = {}

    def args_of(A, Bt, C):
        key = (A.data_ptr(), Bt.data_ptr(), C.data_ptr(), tuple(A.shape), tuple(Bt.shape))
        if key not in cache:
            if loads == "tma":
                maps = [cuda.to_device(tensor_map(A, BM)), cuda.to_device(tensor_map(Bt, BN))]
                first = tuple(np.uint64(m.device_ctypes_pointer.value) for m in maps)
                cache[key] = (first + (cuda.as_cuda_array(C), A.shape[1]), maps)
            else:
                cache[key] = ((np.uint64(A.data_ptr()), np.uint64(Bt.data_ptr()), cuda.as_cuda_array(C),
                               A.shape[1]), ())
        return cache[key][0]

    ready = []

    def launch(A, Bt, C):
        M, N = C.shape
        assert M % (BM * GROUP) == 0 and N % BN == 0 and A.shape[1] % BK == 0
        args = args_of(A, Bt, C)
        if not ready:
            set_max_dynamic_shared(kernel, args, shared)
            ready.append(True)
        tiles = (M // BM) * (N // BN)
        blocks = min(tiles, cuda.get_current_device().MULTIPROCESSOR_COUNT) if persistent else tiles
        kernel[(blocks,), NT, 0, shared](*args)

    launch.kernel, launch.source, launch.threads, launch.shared_bytes = kernel, src, NT, shared
    launch.copied_bytes = lambda M, N, K: (M // BM) * (N // BN) * (K // BK) * (BM + BN) * ROW_BYTES
    return launch
