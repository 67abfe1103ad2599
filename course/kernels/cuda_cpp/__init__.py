"""The course's kernels in CUDA C++ (``kernels.cu``) and their PyTorch wrappers (``bindings.cu``).

``load()`` builds them with ``torch.utils.cpp_extension.load_inline`` (nvcc and ninja, on a machine with a
GPU) and returns the extension module: ``matmul_tiled_launch(A, B, C, tile)``,
``softmax_rows_launch(x, out)``, ``flash_smem_launch(Q, K, V, O, L, causal)``; ``load_tensorcore()`` does the
same for ``tensorcore.cu`` (the bf16 tensor-core matmul, ``mma_bf16_launch(A, B, C)``).
``ptx_with_nvrtc()`` compiles ``kernels.cu`` alone to PTX with NVIDIA's NVRTC library, which needs no GPU
(the ``nvidia-cuda-nvrtc`` wheel): the same front end and optimiser as nvcc, so the same PTX up to version
details.
"""

from __future__ import annotations

import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FUNCTIONS = ["matmul_tiled_launch", "softmax_rows_launch", "flash_smem_launch"]
DECLARATIONS = """
void matmul_tiled_launch(torch::Tensor A, torch::Tensor B, torch::Tensor C, int64_t tile);
void softmax_rows_launch(torch::Tensor x, torch::Tensor out);
void flash_smem_launch(torch::Tensor Q, torch::Tensor K, torch::Tensor V, torch::Tensor O, torch::Tensor L,
                       bool causal);
"""
NVCC_FLAGS = ["-O3", "-arch=sm_90", "-lineinfo"]


def kernels_source() -> str:
    return (HERE / "kernels.cu").read_text()


def bindings_source() -> str:
    return (HERE / "bindings.cu").read_text()


def load(verbose: bool = False, build_directory: str | None = None):
    """Compile kernels.cu + bindings.cu with nvcc through load_inline; returns (module, seconds)."""
    from torch.utils.cpp_extension import load_inline

    start = time.perf_counter()
    module = load_inline(name="course_cuda_kernels", cpp_sources=DECLARATIONS,
                         cuda_sources=kernels_source() + "\n" + bindings_source(), functions=FUNCTIONS,
                         extra_cuda_cflags=NVCC_FLAGS, verbose=verbose, build_directory=build_directory)
    return module, time.perf_counter() - start


def load_tensorcore(verbose: bool = False, build_directory: str | None = None):
    """Compile tensorcore.cu + tensorcore_bindings.cu with nvcc through load_inline; returns (module,
    seconds)."""
    from torch.utils.cpp_extension import load_inline

    start = time.perf_counter()
    declaration = "void mma_bf16_launch(torch::Tensor A, torch::Tensor B, torch::Tensor C);"
    module = load_inline(name="course_cuda_tensorcore", cpp_sources=declaration,
                         cuda_sources=(HERE / "tensorcore.cu").read_text() + "\n"
                         + (HERE / "tensorcore_bindings.cu").read_text(),
                         functions=["mma_bf16_launch"], extra_cuda_cflags=NVCC_FLAGS, verbose=verbose,
                         build_directory=build_directory)
    return module, time.perf_counter() - start


def ptx_with_nvrtc(arch: str = "compute_90") -> tuple[str, float]:
    """PTX of kernels.cu from NVRTC (no GPU needed) and the seconds the compile took.
    Raises RuntimeError with NVRTC's log when the source does not compile."""
    from cuda import pathfinder
    from cuda.bindings import nvrtc

    pathfinder.load_nvidia_dynamic_lib("nvrtc")
    start = time.perf_counter()
    source = kernels_source().encode()
    _, program = nvrtc.nvrtcCreateProgram(source, b"kernels.cu", 0, [], [])
    try:
        options = [f"--gpu-architecture={arch}".encode(), b"-lineinfo"]
        (result,) = nvrtc.nvrtcCompileProgram(program, len(options), options)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, size = nvrtc.nvrtcGetProgramLogSize(program)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(program, log)
            raise RuntimeError(f"NVRTC could not compile kernels.cu:\n{log.decode(errors='replace')}")
        _, size = nvrtc.nvrtcGetPTXSize(program)
        ptx = b" " * size
        nvrtc.nvrtcGetPTX(program, ptx)
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    return ptx.rstrip(b"\0").decode(), time.perf_counter() - start
