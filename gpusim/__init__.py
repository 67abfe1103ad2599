"""gpusim: a checked, instrumented CUDA simulator that runs unchanged Numba kernels on the CPU.

k = gpusim.jit(my_cuda_kernel)        # check=False for a fast unchecked run
k[blocks, threads](a, b, out)         # numpy arrays, CPU torch tensors, scalars
k.report                              # counters of the last launch
"""

__version__ = "0.11.0"  # CHANGELOG.md says what changed

from .checker import Access
from .context import WARP_SIZE
from .errors import (
    ArgumentTypeError,
    BarrierError,
    CompileError,
    DeadlockError,
    FlagRaceError,
    KernelError,
    KernelException,
    KernelTimeoutError,
    OutOfBoundsError,
    RaceError,
    ResourceError,
    UninitializedReadError,
    UnsupportedError,
    WriteConflictError,
)
from .launch import Kernel, jit
from .report import Report

__all__ = [
    "WARP_SIZE",
    "ArgumentTypeError",
    "Access",
    "BarrierError",
    "CompileError",
    "DeadlockError",
    "FlagRaceError",
    "Kernel",
    "KernelError",
    "KernelException",
    "KernelTimeoutError",
    "OutOfBoundsError",
    "RaceError",
    "Report",
    "ResourceError",
    "UninitializedReadError",
    "UnsupportedError",
    "WriteConflictError",
    "jit",
]
