// The course's kernels in CUDA C++, line for line the Numba versions of course/kernels/*.py.
// No #include: NVRTC compiles this file alone (PTX on a machine without a GPU); bindings.cu adds the
// PyTorch wrappers that torch.utils.cpp_extension.load_inline builds with nvcc.
//
// What C++ makes you write that Numba infers: every type, the pointer arithmetic of 2-D indices (row * ld +
// col), and a template parameter where Numba's factory closes over a Python constant.

#define NEG_INF (-__int_as_float(0x7f800000))
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

// ---- matmul: C = A @ B, TILE x TILE tiles in static shared memory (course/kernels/matmul.py, version 4).
// M, N, K must be multiples of TILE, as in the Numba version.
template <int TILE>
__global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float sA[TILE][TILE];
    __shared__ float sB[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        sA[ty][tx] = A[(long)row * K + k0 + tx];
        sB[ty][tx] = B[(long)(k0 + ty) * N + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += sA[ty][k] * sB[k][tx];
        __syncthreads();
    }
    C[(long)row * N + col] = acc;
}

// ---- fused row softmax: one block of THREADS threads per row, tree reductions in shared memory
// (course/kernels/softmax.py). Any number of columns.
template <int THREADS>
__global__ void softmax_rows(const float* x, float* out, int cols) {
    __shared__ float scratch[THREADS];
    int row = blockIdx.x, t = threadIdx.x;
    const float* xr = x + (long)row * cols;
    float m = NEG_INF;
    for (int j = t; j < cols; j += THREADS) m = fmaxf(m, xr[j]);
    scratch[t] = m;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) scratch[t] = fmaxf(scratch[t], scratch[t + s]);
        __syncthreads();
    }
    m = scratch[0] * LOG2E;
    __syncthreads();  // everyone has read the max before scratch holds sums
    float sum = 0.0f;
    for (int j = t; j < cols; j += THREADS) sum += exp2f(xr[j] * LOG2E - m);
    scratch[t] = sum;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) scratch[t] += scratch[t + s];
        __syncthreads();
    }
    float inv = 1.0f / scratch[0];
    for (int j = t; j < cols; j += THREADS) out[(long)row * cols + j] = exp2f(xr[j] * LOG2E - m) * inv;
}

// ---- FlashAttention forward, one thread per query row, K/V tiles of BQ rows in shared memory
// (course/kernels/attention.py, make_flash_smem). Q, K, V, O: (BH, N, D); L: (BH, N); N a multiple of BQ.
// qscale = log2(e) / sqrt(D): scores in base 2, exp2 is one instruction.
template <int D, int BQ, bool CAUSAL>
__global__ void flash_smem(const float* Q, const float* K, const float* V, float* O, float* L, int N,
                           float qscale) {
    __shared__ float sK[BQ][D];
    __shared__ float sV[BQ][D];
    float q[D], acc[D];
    int tid = threadIdx.x, bh = blockIdx.y;
    int qb = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;  // causal: longest rows first
    int qi = qb * BQ + tid;
    long base = (long)bh * N * D;
    for (int c = 0; c < D; ++c) {
        q[c] = Q[base + (long)qi * D + c] * qscale;
        acc[c] = 0.0f;
    }
    float m = NEG_INF, l = 0.0f;
    int ntiles = CAUSAL ? qb + 1 : N / BQ;
    for (int t = 0; t < ntiles; ++t) {
        int kv0 = t * BQ;
        for (int p = 0; p < D; ++p) {  // BQ * D elements, BQ threads: coalesced
            int idx = tid + BQ * p;
            sK[idx / D][idx % D] = K[base + (long)(kv0 + idx / D) * D + idx % D];
            sV[idx / D][idx % D] = V[base + (long)(kv0 + idx / D) * D + idx % D];
        }
        __syncthreads();
        int jend = (CAUSAL && t == ntiles - 1) ? tid + 1 : BQ;
        for (int j = 0; j < jend; ++j) {
            float s = 0.0f;
            for (int c = 0; c < D; ++c) s += q[c] * sK[j][c];
            if (s > m) {  // lazy rescale: only when the running max grows
                float alpha = exp2f(m - s);
                l *= alpha;
                for (int c = 0; c < D; ++c) acc[c] *= alpha;
                m = s;
            }
            float p = exp2f(s - m);
            l += p;
            for (int c = 0; c < D; ++c) acc[c] += p * sV[j][c];
        }
        __syncthreads();
    }
    float inv = 1.0f / l;
    for (int c = 0; c < D; ++c) O[base + (long)qi * D + c] = acc[c] * inv;
    L[(long)bh * N + qi] = (m + log2f(l)) * LN2;
}

// The instances the benchmark uses (NVRTC emits only instantiated templates).
template __global__ void matmul_tiled<16>(const float*, const float*, float*, int, int, int);
template __global__ void matmul_tiled<32>(const float*, const float*, float*, int, int, int);
template __global__ void softmax_rows<256>(const float*, float*, int);
template __global__ void flash_smem<64, 64, false>(const float*, const float*, const float*, float*, float*,
                                                  int, float);
template __global__ void flash_smem<64, 64, true>(const float*, const float*, const float*, float*, float*,
                                                 int, float);
