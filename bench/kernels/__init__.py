"""The course's Numba CUDA kernels, one function (or kernel factory) per version.

``matmul``    -- C = A @ B in float32, from one thread per output to register tiling.
``attention`` -- FlashAttention forward in float32, from one thread per query row to register tiles.

Every kernel here also runs under Numba's CPU simulator (``NUMBA_ENABLE_CUDASIM=1``) at tiny sizes, so the
lessons can show and execute them on a machine without a GPU.  None of them uses warp intrinsics.
"""

from . import attention, matmul

__all__ = ["attention", "matmul"]
