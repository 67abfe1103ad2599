"""The course's three kernels in Triton: tiled matmul, fused row softmax, FlashAttention forward (float32).

A Triton kernel is written for one *program* (a GPU block) and works on whole tiles: ``tl.arange`` makes a
vector of indices, ``tl.load`` / ``tl.store`` move a tile, with a *mask* where the tile sticks out of the
array; the compiler picks threads, shared memory, vector loads and pipelining. Where there is no GPU, set
``TRITON_INTERPRET=1`` before importing triton: the same kernels then run on the CPU, tile by tile, in NumPy.

Every launcher takes PyTorch tensors (CUDA tensors on a GPU, CPU tensors under the interpreter).
Matmuls use ``input_precision="ieee"``: true float32 products, as the Numba and CUDA C++ kernels compute
(the default would round the inputs to TF32 on tensor cores).
"""

import math
import os

import triton
import triton.language as tl

# Globals a kernel reads must be tl.constexpr: the compiler refuses plain numbers (the interpreter does not).
LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """One program computes a BLOCK_M x BLOCK_N tile of C = A @ B; masks handle any M, N, K."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :],
                    mask=(rows[:, None] < M) & ((k0 + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :],
                    mask=((k0 + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, c, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_warps=8, num_stages=3):
    """c = a @ b for row-major float32 matrices (any sizes)."""
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    return matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                               num_warps=num_warps, num_stages=num_stages)


@triton.jit
def matmul_bf16_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """matmul_kernel for bfloat16 A and B and a float32 C, sizes multiples of the blocks (no masks): tl.dot
    of two bf16 tiles runs on the tensor cores (wgmma on Hopper, mma.sync before), accumulating in fp32."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :])
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc)


# Tile shapes for the bf16 matmul; num_warps and num_stages are the user's (or, here, the autotuner's)
# choice, not Triton's: the compiler lays the tiles out over those warps and builds a pipeline that deep.
MATMUL_BF16_CONFIGS = [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=w, num_stages=s)
                       for m, n, k, w, s in ((128, 128, 64, 4, 3), (128, 128, 64, 8, 4), (128, 256, 64, 8, 3),
                                             (256, 128, 64, 8, 3), (128, 128, 32, 4, 4))]
matmul_bf16_tuned = triton.autotune(MATMUL_BF16_CONFIGS, key=["M", "N", "K"])(matmul_bf16_kernel)


def matmul_bf16(a, b, c, tiles="autotune"):
    """c (float32) = a @ b for row-major bfloat16 a and b, sizes multiples of the tiles. tiles =
    (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages), or "autotune" (GPU only: every configuration of
    MATMUL_BF16_CONFIGS is timed on the first call for each size, the fastest kept)."""
    M, K = a.shape
    N = b.shape[1]
    args = (a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0))
    if tiles == "autotune":
        def grid(cfg):
            return triton.cdiv(M, cfg["BLOCK_M"]), triton.cdiv(N, cfg["BLOCK_N"])
        return matmul_bf16_tuned[grid](*args)
    block_m, block_n, block_k, num_warps, num_stages = tiles
    assert M % block_m == 0 and N % block_n == 0 and K % block_k == 0, "sizes must be multiples of the tiles"
    return matmul_bf16_kernel[(M // block_m, N // block_n)](*args, BLOCK_M=block_m, BLOCK_N=block_n,
                                                            BLOCK_K=block_k, num_warps=num_warps,
                                                            num_stages=num_stages)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    """One program per row: the whole row is one tile of BLOCK >= n_cols lanes; the padding lanes load -inf,
    so they change neither the maximum nor (exp(-inf) = 0) the sum."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf"))
    z = (x - tl.max(x, axis=0)) * LOG2E
    e = tl.exp2(z)
    tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, axis=0), mask=mask)


def softmax(x, out):
    """out = softmax(x, dim=1) for a float32 matrix."""
    block = triton.next_power_of_2(x.shape[1])
    num_warps = 4 if block <= 2048 else 8 if block <= 8192 else 16
    return softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block,
                                         num_warps=num_warps)


@triton.jit
def flash_tiles(acc, total, m, q, k_ptr, v_ptr, rows, dims, keys, n_k, lo, hi, D: tl.constexpr,
                BLOCK_N: tl.constexpr, CAUSAL_MASK: tl.constexpr, OFFSET: tl.constexpr):
    """Fold the key tiles lo, lo + BLOCK_N, ... below hi into one query tile's running (acc, total, m).
    k_ptr, v_ptr point at this head's keys and values; CAUSAL_MASK switches on the mask j <= i + OFFSET."""
    for start in range(lo, hi, BLOCK_N):
        kv = start + keys
        k = tl.load(k_ptr + kv[:, None] * D + dims[None, :], mask=kv[:, None] < n_k, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee")
        seen = kv[None, :] < n_k
        if CAUSAL_MASK:
            seen = seen & (kv[None, :] <= rows[:, None] + OFFSET)
        s = tl.where(seen, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)  # a row with no key yet: exp2(-inf) = 0
        alpha = tl.exp2(m - m_safe)
        p = tl.exp2(s - m_safe[:, None])
        total = total * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + kv[:, None] * D + dims[None, :], mask=kv[:, None] < n_k, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m = m_new
    return acc, total, m


@triton.jit
def flash_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, n_q, n_k, qscale,
                 D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 CAUSAL: tl.constexpr, OFFSET: tl.constexpr):
    """FlashAttention forward for one tile of BLOCK_M query rows of one head (program (tile, head)).

    q: (heads, n_q, D), k and v: (heads, n_k, D), all contiguous; o like q, lse: (heads, n_q), natural log.
    Causal: key j is seen by query i when j <= i + OFFSET (OFFSET = 0: the usual diagonal; -1: strictly
    below it, as between two stripes of ring attention). A row that sees no key gets o = 0, lse = -inf.
    Causal tiles come in two loops, as in Triton's own tutorial: the key tiles wholly below the diagonal,
    which every row sees (no causal mask), then the few that cross it (masked); none above it is loaded.
    """
    tl.static_assert(OFFSET >= -1)  # keys before the tile's first row are seen by all its rows
    tile = tl.program_id(0)
    head = tl.program_id(1)
    rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, D)
    keys = tl.arange(0, BLOCK_N)
    q = tl.load(q_ptr + head * n_q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < n_q,
                other=0.0)
    q = q * qscale  # scale * log2(e): scores in base 2
    m = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    total = tl.zeros((BLOCK_M,), dtype=tl.float32)  # the running sum (l in the lessons)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    k_head = k_ptr + head * n_k * D
    v_head = v_ptr + head * n_k * D
    if CAUSAL:
        below = (tile * BLOCK_M) // BLOCK_N * BLOCK_N  # key tiles before this: seen whole by every row
        acc, total, m = flash_tiles(acc, total, m, q, k_head, v_head, rows, dims, keys, n_k, 0, below, D,
                                    BLOCK_N, False, OFFSET)
        end = tl.minimum(n_k, tile * BLOCK_M + BLOCK_M + OFFSET)  # no key tile wholly above the diagonal
        acc, total, m = flash_tiles(acc, total, m, q, k_head, v_head, rows, dims, keys, n_k, below, end, D,
                                    BLOCK_N, True, OFFSET)
    else:
        acc, total, m = flash_tiles(acc, total, m, q, k_head, v_head, rows, dims, keys, n_k, 0, n_k, D,
                                    BLOCK_N, False, OFFSET)
    has_keys = total > 0.0
    safe_total = tl.where(has_keys, total, 1.0)
    out = acc / safe_total[:, None]
    lse = tl.where(has_keys, (m + tl.log2(safe_total)) * LN2, -float("inf"))
    tl.store(o_ptr + head * n_q * D + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < n_q)
    tl.store(lse_ptr + head * n_q + rows, lse, mask=rows < n_q)


# Tile shapes (BLOCK_M, BLOCK_N, num_warps) for the flash kernel. Float32 with input_precision="ieee" has no
# tensor-core instruction on Hopper, so tl.dot becomes FMAs whose operands sit in registers, and register
# pressure decides. Compiled for sm_90 (`python bench/compile_chain.py --flash-configs`), 64 x 64 tiles on 4
# warps, this module's first choice and kept first here for comparison, need 255 registers and spill
# hundreds of bytes per thread; the others spill nothing or a few bytes.
FLASH_CONFIGS = [triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=w, num_stages=2)
                 for m, n, w in ((64, 64, 4), (64, 32, 8), (32, 64, 8), (64, 64, 8), (128, 16, 8),
                                 (64, 16, 4), (32, 32, 4))]
FLASH_TILES = (64, 32, 8)  # a plain call's tiles (no spills on sm_90)
flash_tuned = triton.autotune(FLASH_CONFIGS, key=["n_q", "n_k", "D", "CAUSAL", "OFFSET"])(flash_kernel)


def flash_attention(q, k, v, o, lse, causal=False, offset=0, tiles=FLASH_TILES):
    """o, lse = attention(q, k, v) for (heads, n, D) float32 tensors; D a power of 2 (>= 16).

    tiles = (BLOCK_M, BLOCK_N, num_warps), or "autotune" (GPU only): Triton's autotuner then times every
    configuration of FLASH_CONFIGS on the first call for each (sizes, causal, offset), launches the fastest
    from then on, and keeps it in `flash_tuned.best_config` (and all the timings in `configs_timings`)."""
    heads, n_q, d = q.shape
    args = (q, k, v, o, lse, n_q, k.shape[1], LOG2E.value / math.sqrt(d))
    meta = dict(D=d, CAUSAL=causal, OFFSET=offset)
    if tiles == "autotune":
        if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
            raise ValueError("the interpreter cannot time kernels: give tiles=(BLOCK_M, BLOCK_N, num_warps)")
        return flash_tuned[lambda config: (triton.cdiv(n_q, config["BLOCK_M"]), heads)](*args, **meta)
    block_m, block_n, num_warps = tiles
    return flash_kernel[(triton.cdiv(n_q, block_m), heads)](*args, **meta, BLOCK_M=block_m, BLOCK_N=block_n,
                                                             num_warps=num_warps, num_stages=2)
