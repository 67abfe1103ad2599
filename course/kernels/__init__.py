"""The course's Numba CUDA kernels, one function (or kernel factory) per version.

``matmul``    -- C = A @ B in float32, from one thread per output to register tiling.
``attention`` -- FlashAttention forward in float32, from one thread per query row to register tiles.
``softmax``   -- the fused row softmax, one block per row.

The same kernels in the two other languages of Part 9 live beside them: ``cuda_cpp/`` (CUDA C++, built with
``torch.utils.cpp_extension.load_inline``) and ``triton_kernels`` (Triton; import it yourself, after setting
``TRITON_INTERPRET=1`` where there is no GPU), and ``ring`` holds ring attention's pieces in PyTorch.
Import the module you need (``from course.kernels import matmul``): importing the package imports none of
them, so that a script that needs only ``ring`` does not pay for numba.

Every kernel here also runs under Numba's CPU simulator (``NUMBA_ENABLE_CUDASIM=1``) at tiny sizes, so the
lessons can show and execute them on a machine without a GPU.  None of them uses warp intrinsics.
"""

