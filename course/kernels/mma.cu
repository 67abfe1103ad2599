// Tensor-core building blocks for Numba kernels: the one place the course leaves Python.
//
// Numba has no tensor-core API, but it can call a CUDA C++ device function that it compiles (NVRTC) and
// links into the kernel; link-time optimisation then inlines it, so each call below becomes the single
// instruction it wraps.  Declared in tensorcore.py with cuda.declare_device(name, signature, link=[this]).
//
// Numba's ABI for such a function: extern "C", returns int (0: no Python exception), and its first
// argument points to where the result goes.  Fragments are 32-bit registers holding two bf16 each, passed
// as int32.  Shared memory is addressed by byte offsets into the kernel's *dynamic* shared memory (every
// `extern __shared__` array starts there, Numba's `cuda.shared.array(0, ...)` included).

struct f32x4 { float x, y, z, w; };
struct i32x4 { int x, y, z, w; };  // (no #include: NVRTC has no standard headers)

extern __shared__ __align__(16) unsigned char dynamic_shared[];

__device__ __forceinline__ unsigned shared_address(int byte_offset) {
  return static_cast<unsigned>(__cvta_generic_to_shared(dynamic_shared)) + byte_offset;
}

// D = A B + C for one 16x16 (A, row-major) times 16x8 (B, "col": k-pairs packed) tile, bf16 in, fp32
// accumulate, by the 32 lanes of a warp together.  Lane l = 4g + t holds (PTX ISA, m16n8k16 fragments):
//   A: a0 = A[g][2t..2t+1], a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]
//   B: b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]
//   C, D: c0, c1 = C[g][2t..2t+1], c2, c3 = C[g+8][2t..2t+1]
extern "C" __device__ int mma_bf16_16816(f32x4* d, int a0, int a1, int a2, int a3,
                                         int b0, int b1, float c0, float c1, float c2, float c3) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d->x), "=f"(d->y), "=f"(d->z), "=f"(d->w)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
  return 0;
}

// Four 8x8 bf16 matrices from shared memory in one instruction: lane l gives the address of one 16-byte
// row (lanes 0-7 the rows of matrix 0, 8-15 of matrix 1, ...) and receives, per matrix, the two elements
// that an mma fragment wants in lane l: exactly a0..a3 above when the four matrices are the quadrants of
// a 16x16 A tile.
extern "C" __device__ int ldmatrix_x4(i32x4* r, int byte_offset) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r->x), "=r"(r->y), "=r"(r->z), "=r"(r->w)
               : "r"(shared_address(byte_offset)) : "memory");
  return 0;
}

// The same, transposing each 8x8 matrix on the way: B stored row-major (k rows, n columns) comes out as
// the "col" fragments b0, b1 of two 8-column tiles, so B needs no transposed copy.
extern "C" __device__ int ldmatrix_x4_trans(i32x4* r, int byte_offset) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r->x), "=r"(r->y), "=r"(r->z), "=r"(r->w)
               : "r"(shared_address(byte_offset)) : "memory");
  return 0;
}

// Asynchronous copy of 16 bytes from global to shared memory (no registers on the way); completion is
// tracked per thread in groups: commit closes a group, wait_N waits until at most N groups are in flight.
extern "C" __device__ int cp_async16(int* ret, int byte_offset, unsigned long long global_address) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
               :: "r"(shared_address(byte_offset)), "l"(global_address) : "memory");
  *ret = 0;
  return 0;
}

extern "C" __device__ int cp_async_commit(int* ret) {
  asm volatile("cp.async.commit_group;" ::: "memory");
  *ret = 0;
  return 0;
}

extern "C" __device__ int cp_async_wait_0(int* ret) {
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  *ret = 0;
  return 0;
}

extern "C" __device__ int cp_async_wait_1(int* ret) {
  asm volatile("cp.async.wait_group 1;" ::: "memory");
  *ret = 0;
  return 0;
}

extern "C" __device__ int cp_async_wait_2(int* ret) {
  asm volatile("cp.async.wait_group 2;" ::: "memory");
  *ret = 0;
  return 0;
}

// Two fp32 numbers rounded to bf16 (round to nearest even) and packed into one register, `lo` in the low
// half: the A fragment of a product whose first factor was computed in fp32 (FlashAttention's P).
extern "C" __device__ int pack_bf16x2(int* r, float lo, float hi) {
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(*r) : "f"(hi), "f"(lo));
  return 0;
}
