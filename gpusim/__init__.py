"""gpusim: a checked, instrumented CUDA simulator that runs unchanged Numba kernels on the CPU.

k = gpusim.jit(my_cuda_kernel)        # check=False for a fast unchecked run
k[blocks, threads](a, b, out)         # numpy arrays, CPU torch tensors, scalars
k.report                              # counters of the last launch
"""

__version__ = "0.12.1"  # CHANGELOG.md says what changed

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
    ScheduleError,
    UninitializedReadError,
    UnsupportedError,
    WriteConflictError,
)
from .fakecuda import is_cuda_stand_in
from .launch import Kernel, jit
from .linked import MMA_LAYOUT, stand_in
from .rebind import python_function
from .report import Report
from .schedule import Schedule, schedules
from .sites import describe_line, place_name
from .sweep import compare as schedule_difference
from .sweep import run_schedules
from .wgmma import WgmmaDescriptor, wgmma_operand

__all__ = [
    "MMA_LAYOUT",
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
    "Schedule",
    "ScheduleError",
    "UninitializedReadError",
    "UnsupportedError",
    "WgmmaDescriptor",
    "WriteConflictError",
    "describe_line",
    "is_cuda_stand_in",
    "stand_in",
    "jit",
    "place_name",
    "python_function",
    "run_schedules",
    "schedule_difference",
    "schedules",
    "wgmma_operand",
]
