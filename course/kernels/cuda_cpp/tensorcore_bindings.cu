// PyTorch wrapper around tensorcore.cu: check the tensors, allow the kernel its shared memory, launch on
// PyTorch's stream. load_tensorcore() in __init__.py compiles tensorcore.cu + this file with nvcc.
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

void mma_bf16_launch(torch::Tensor A, torch::Tensor B, torch::Tensor C) {
    TORCH_CHECK(A.is_cuda() && A.dtype() == torch::kBFloat16 && A.is_contiguous(), "A: contiguous bf16 CUDA");
    TORCH_CHECK(B.is_cuda() && B.dtype() == torch::kBFloat16 && B.is_contiguous(), "B: contiguous bf16 CUDA");
    TORCH_CHECK(C.is_cuda() && C.dtype() == torch::kFloat32 && C.is_contiguous(), "C: contiguous fp32 CUDA");
    int M = A.size(0), K = A.size(1), N = B.size(1);
    TORCH_CHECK(B.size(0) == K && C.size(0) == M && C.size(1) == N, "shapes (M, K) @ (K, N) -> (M, N)");
    TORCH_CHECK(M % TC_BM == 0 && N % TC_BN == 0 && K % TC_BK == 0, "M, N multiples of 128, K of 32");
    auto kernel = mma_bf16<TC_BM, TC_BN, TC_BK, TC_WM, TC_WN, TC_STAGES>;
    static bool ready = false;  // more than 48 KiB of dynamic shared memory must be asked for once
    if (!ready) {
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, TC_SHARED);
        ready = true;
    }
    dim3 grid(N / TC_BN, M / TC_BM);
    kernel<<<grid, TC_THREADS, TC_SHARED, c10::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const __nv_bfloat16*>(A.data_ptr<at::BFloat16>()),
        reinterpret_cast<const __nv_bfloat16*>(B.data_ptr<at::BFloat16>()), C.data_ptr<float>(), M, N, K);
}
