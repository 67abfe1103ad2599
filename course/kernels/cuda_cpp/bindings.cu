// PyTorch wrappers around kernels.cu: check the tensors, pick the grid, launch on PyTorch's stream.
// load_inline compiles kernels.cu + this file with nvcc and makes each function below callable from Python.
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

static void check(const torch::Tensor& t, const char* name) {
    TORCH_CHECK(t.is_cuda() && t.dtype() == torch::kFloat32 && t.is_contiguous(), name,
                " must be a contiguous float32 CUDA tensor");
}

void matmul_tiled_launch(torch::Tensor A, torch::Tensor B, torch::Tensor C, int64_t tile) {
    check(A, "A"); check(B, "B"); check(C, "C");
    int M = A.size(0), K = A.size(1), N = B.size(1);
    TORCH_CHECK(M % tile == 0 && N % tile == 0 && K % tile == 0, "sizes must be multiples of the tile");
    auto stream = c10::cuda::getCurrentCUDAStream();
    dim3 grid(N / tile, M / tile);
    if (tile == 16) {
        matmul_tiled<16><<<grid, dim3(16, 16), 0, stream>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                                            C.data_ptr<float>(), M, N, K);
    } else {
        TORCH_CHECK(tile == 32, "tile must be 16 or 32");
        matmul_tiled<32><<<grid, dim3(32, 32), 0, stream>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                                            C.data_ptr<float>(), M, N, K);
    }
}

void softmax_rows_launch(torch::Tensor x, torch::Tensor out) {
    check(x, "x"); check(out, "out");
    int rows = x.size(0), cols = x.size(1);
    softmax_rows<256><<<rows, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), cols);
}

void flash_smem_launch(torch::Tensor Q, torch::Tensor K, torch::Tensor V, torch::Tensor O, torch::Tensor L,
                       bool causal) {
    check(Q, "Q"); check(K, "K"); check(V, "V"); check(O, "O"); check(L, "L");
    int BH = Q.size(0), N = Q.size(1);
    TORCH_CHECK(Q.size(2) == 64 && N % 64 == 0, "head dimension 64 and N a multiple of 64");
    float qscale = 1.4426950408889634f / sqrtf(64.0f);
    dim3 grid(N / 64, BH);
    auto stream = c10::cuda::getCurrentCUDAStream();
    const float *q = Q.data_ptr<float>(), *k = K.data_ptr<float>(), *v = V.data_ptr<float>();
    if (causal) {
        flash_smem<64, 64, true><<<grid, 64, 0, stream>>>(q, k, v, O.data_ptr<float>(), L.data_ptr<float>(),
                                                          N, qscale);
    } else {
        flash_smem<64, 64, false><<<grid, 64, 0, stream>>>(q, k, v, O.data_ptr<float>(), L.data_ptr<float>(),
                                                           N, qscale);
    }
}
