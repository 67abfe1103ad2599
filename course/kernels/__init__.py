"""The course's Numba CUDA kernels, one function (or kernel factory) per version.

``matmul``    -- C = A @ B in float32, from one thread per output to register tiling.
``attention`` -- FlashAttention forward in float32, from one thread per query row to register tiles.
``softmax``   -- the fused row softmax, one block per row.
``attention_backward`` -- FlashAttention backward in float32 (dQ pass, dK/dV pass), by recomputation.
``tensorcore`` -- bf16 matmul on tensor cores: Numba kernels calling the CUDA C++ functions of ``mma.cu``
                  (mma.sync, ldmatrix, cp.async), linked with ``cuda.declare_device``.
``tensorcore_attention`` -- FlashAttention forward on tensor cores, from the same pieces.

The same kernels in the two other languages of Part 9 live beside them: ``cuda_cpp/`` (CUDA C++, built with
``torch.utils.cpp_extension.load_inline``) and ``triton_kernels`` (Triton; import it yourself, after setting
``TRITON_INTERPRET=1`` where there is no GPU), and ``ring`` holds ring attention's pieces in PyTorch.
Import the module you need (``from course.kernels import matmul``): importing the package imports none of
them, so that a script that needs only ``ring`` does not pay for numba.

The float32 kernels also run on the CPU at tiny sizes: under Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``),
or under gpusim for those with warp intrinsics (attention version 6).  Of the tensor-core kernels only
version 13 runs on the CPU, under gpusim, which stands in for the linked ``mma.sync`` (``gpusim/linked.py``).
"""

