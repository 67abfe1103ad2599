"""The CUDA C++ side of the wgmma probe (bench/hopper_wgmma_probe.py): Hopper's warpgroup matrix multiply
with both operands read from shared memory by matrix descriptors, as functions a Numba kernel links.

Layout (no swizzle): an operand is made of 8 x 8 "core matrices" of bf16, each 8 rows of 16 contiguous
bytes (128 bytes). A (M x K = 64 x 16) and B transposed (N x K, so that K is contiguous for both: the
"K-major" layout wgmma reads without transposing) are stored core matrix after core matrix: the one at
(row block r, k block c) starts at byte (2 r + c) * 128. So neighbours along K are 128 bytes apart and
neighbours along M (or N) 256 bytes: the descriptor's "leading" byte offset is the K step (128) and its
"stride" byte offset the M/N step (256), as the probe found (the other way round, wgmma reads outside the
shared memory).
"""

HEADER = r"""
struct f32x4 { float x, y, z, w; };
extern __shared__ __align__(128) unsigned char dynamic_shared[];

__device__ __forceinline__ unsigned long long descriptor(int byte_offset, int leading, int stride) {
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(dynamic_shared)) + byte_offset;
  return (unsigned long long)((address & 0x3FFFF) >> 4)
       | ((unsigned long long)((leading >> 4) & 0x3FFF) << 16)
       | ((unsigned long long)((stride >> 4) & 0x3FFF) << 32);  // base offset 0, swizzle 0: none
}

// Shared memory written by threads (the generic proxy) made visible to wgmma (the async proxy): each
// thread fences its own writes, then the block meets at a barrier.
extern "C" __device__ int fence_proxy_async(int* unused) {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  return 0;
}
"""


def _operands(count: int, first: int = 0) -> str:
    return ", ".join(f"%{first + i}" for i in range(count))


def mma_function(n: int) -> str:
    """``wgmma_m64n{n}k16``: D (64 x n, fp32) = A B, once; each of the 128 threads gets its 4 values of
    the first 8 columns (d[0..3]: rows 16 w + g and 16 w + g + 8, columns 2 t and 2 t + 1, where w is the
    warp, g = lane / 4, t = lane % 4)."""
    regs = n // 2
    outputs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    return rf"""
extern "C" __device__ int wgmma_m64n{n}k16(f32x4* out, int a_offset, int b_offset, int leading,
                                         int stride) {{
  float d[{regs}];
  for (int i = 0; i < {regs}; ++i) d[i] = 0.0f;
  unsigned long long da = descriptor(a_offset, leading, stride), db = descriptor(b_offset, leading, stride);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("{{\n.reg .pred p;\nsetp.ne.b32 p, %{regs + 2}, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{_operands(regs)}}}, %{regs}, "
               "%{regs + 1}, p, 1, 1, 0, 0;\n}}\n"
               : {outputs} : "l"(da), "l"(db), "r"(0));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out->x = d[0]; out->y = d[1]; out->z = d[2]; out->w = d[3];
  return 0;
}}
"""


def loop_function(n: int) -> str:
    """``wgmma_loop_m64n{n}k16``: ``rounds`` products accumulated back to back (no wait between them), for
    the instruction's throughput; returns four sums of the accumulators, so that nothing is optimised
    away."""
    regs = n // 2
    outputs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    return rf"""
extern "C" __device__ int wgmma_loop_m64n{n}k16(f32x4* out, int a_offset, int b_offset, int leading,
                                              int stride, int rounds) {{
  float d[{regs}];
  for (int i = 0; i < {regs}; ++i) d[i] = 0.0f;
  unsigned long long da = descriptor(a_offset, leading, stride), db = descriptor(b_offset, leading, stride);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  for (int r = 0; r < rounds; ++r) {{
    asm volatile("{{\n.reg .pred p;\nsetp.ne.b32 p, %{regs + 2}, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{_operands(regs)}}}, %{regs}, "
                 "%{regs + 1}, p, 1, 1, 0, 0;\n}}\n"
                 : {outputs} : "l"(da), "l"(db), "r"(1));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  }}
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int i = 0; i < {regs}; i += 4) {{ s0 += d[i]; s1 += d[i + 1]; s2 += d[i + 2]; s3 += d[i + 3]; }}
  out->x = s0; out->y = s1; out->z = s2; out->w = s3;
  return 0;
}}
"""


def source(sizes=(8, 256)) -> str:
    return HEADER + "".join(mma_function(n) + loop_function(n) for n in sizes)
