// ---- Tensor-core matmul in CUDA C++: C (float32) = A @ B for row-major bfloat16 A (M x K) and B (K x N), the
// CUDA C++ row of Part 9's bf16 comparison. The design of Part 5's Numba version 15 (course/kernels/
// tensorcore.py), written in C++: block tiles of BM x BN, K steps of BK in STAGES shared buffers filled by
// cp.async (global -> shared, 16 bytes, no registers on the way; STAGES - 1 steps in flight, one barrier per
// step); each warp owns a WM x WN tile of C, loads its fragments with ldmatrix (B transposed on the way) and
// multiplies with mma.sync m16n8k16, accumulating in fp32 registers. Shared rows are padded by 8 elements
// (16 bytes) so that the 8 rows an ldmatrix reads fall in 8 different groups of banks.
// M and N multiples of the block tile, K of BK.
#include <cuda_bf16.h>
#include <cuda_pipeline.h>

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned address, bool trans) {
    if (trans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));
}

__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
mma_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {
    constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int MT = WM / 16, NT8 = WN / 8;  // 16-row A tiles and 8-column B tiles of a warp
    constexpr int AST = BK + 8, BST = BN + 8;  // padded row strides of the shared tiles (elements)
    extern __shared__ __align__(128) unsigned char smem[];
    __nv_bfloat16* sA = reinterpret_cast<__nv_bfloat16*>(smem);  // STAGES x BM x AST
    __nv_bfloat16* sB = sA + STAGES * BM * AST;                    // STAGES x BK x BST
    unsigned a_base = static_cast<unsigned>(__cvta_generic_to_shared(sA));
    unsigned b_base = static_cast<unsigned>(__cvta_generic_to_shared(sB));
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int wm = warp / WARPS_N, wn = warp % WARPS_N;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    auto load = [&](int stage, int k0) {  // one K step of A and B in 16-byte chunks, every thread a share
        for (int c = tid; c < BM * BK / 8; c += THREADS) {
            int r = c / (BK / 8), col = (c % (BK / 8)) * 8;
            __pipeline_memcpy_async(&sA[(stage * BM + r) * AST + col], &A[(long)(m0 + r) * K + k0 + col], 16);
        }
        for (int c = tid; c < BK * BN / 8; c += THREADS) {
            int r = c / (BN / 8), col = (c % (BN / 8)) * 8;
            __pipeline_memcpy_async(&sB[(stage * BK + r) * BST + col], &B[(long)(k0 + r) * N + n0 + col], 16);
        }
        __pipeline_commit();
    };

    float acc[MT][NT8][4] = {};
    int steps = K / BK;
    for (int s = 0; s < STAGES - 1; ++s) {  // the first STAGES - 1 steps in flight
        if (s < steps) load(s, s * BK);
        else __pipeline_commit();
    }
    for (int t = 0; t < steps; ++t) {
        __pipeline_wait_prior(STAGES - 2);  // step t has landed (this thread's copies)...
        __syncthreads();                    // ...every thread's; and step t - 1's reads are done
        int next = t + STAGES - 1;          // refill the buffer that step t - 1 used
        if (next < steps) load(next % STAGES, next * BK);
        else __pipeline_commit();
        int stage = t % STAGES;
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[MT][4], b[NT8][2];
            for (int i = 0; i < MT; ++i) {  // lane l: row l % 16, columns kk + 8 (l / 16) of a 16 x 16 tile
                int row = stage * BM + wm * WM + i * 16 + lane % 16, col = kk + (lane / 16) * 8;
                ldmatrix_x4(a[i], a_base + (row * AST + col) * 2, false);
            }
            for (int j = 0; j < NT8; j += 2) {  // two 8-column tiles: k rows kk + l % 8 (+ 8), transposed
                unsigned r[4];
                int row = stage * BK + kk + lane % 8 + ((lane / 8) % 2) * 8;
                int col = wn * WN + j * 8 + (lane / 16) * 8;
                ldmatrix_x4(r, b_base + (row * BST + col) * 2, true);
                b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
            }
            for (int i = 0; i < MT; ++i)
                for (int j = 0; j < NT8; ++j) mma_16816(acc[i][j], a[i], b[j][0], b[j][1]);
        }
    }
    int g = lane / 4, q = lane % 4;  // lane 4g + q holds rows g and g + 8, columns 2q and 2q + 1 of a tile
    for (int i = 0; i < MT; ++i)
        for (int j = 0; j < NT8; ++j) {
            float* c = C + (long)(m0 + wm * WM + i * 16 + g) * N + n0 + wn * WN + j * 8 + 2 * q;
            *reinterpret_cast<float2*>(c) = make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2*>(c + 8L * N) = make_float2(acc[i][j][2], acc[i][j][3]);
        }
}

// The instance the benchmark launches: version 15's shape (128 x 128 block tiles, K steps of 32, 8 warps of
// 64 x 32, 3 stages).
constexpr int TC_BM = 128, TC_BN = 128, TC_BK = 32, TC_WM = 64, TC_WN = 32, TC_STAGES = 3;
constexpr int TC_THREADS = (TC_BM / TC_WM) * (TC_BN / TC_WN) * 32;
constexpr int TC_SHARED = TC_STAGES * (TC_BM * (TC_BK + 8) + TC_BK * (TC_BN + 8)) * 2;
template __global__ void mma_bf16<TC_BM, TC_BN, TC_BK, TC_WM, TC_WN, TC_STAGES>(
    const __nv_bfloat16*, const __nv_bfloat16*, float*, int, int, int);
