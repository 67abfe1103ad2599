"""The `cuda` object that rebound kernels see in place of a front end's `cuda` module (gpusim.frontends).

Thread and block indices are plain attributes that the scheduler sets on every switch, so reading
`cuda.threadIdx.x` costs two attribute lookups.
"""

import math
import numbers
import sys
from collections import namedtuple

import numpy as np

from . import frontends, intrinsics
from .arrays import DeviceArray
from .context import WARP_SIZE, current, who
from .errors import UnsupportedError
from .fp16 import Fp16
from .libdevice import Libdevice

FULL_MASK = 0xFFFFFFFF
POINTER_BYTES = 8

Dim3 = namedtuple("Dim3", "x y z")
INDEX_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim")


class LiveDim3:
    """`threadIdx` (or blockIdx, blockDim, gridDim) imported by name: reads the running thread's value."""

    __slots__ = ("_fake", "_name")

    def __init__(self, fake, name):
        self._fake = fake
        self._name = name

    x = property(lambda self: getattr(self._fake, self._name).x)
    y = property(lambda self: getattr(self._fake, self._name).y)
    z = property(lambda self: getattr(self._fake, self._name).z)


def _apply_atomic(ary, idx, op, *operands):
    if isinstance(ary, DeviceArray):
        old, new, address = ary.atomic(idx, op, sys._getframe(2), *operands)
    else:
        old = ary[idx]
        new = op(old, *operands)
        ary[idx] = new
        address = None
    scheduler = current.scheduler
    if scheduler.clocks is None and old != new:  # an update outside flag phases: nothing to follow
        return old
    scheduler.after_atomic(ary, idx, (id(ary), idx) if address is None else address, old, new, operands)
    return old


class _Atomic:
    """`cuda.atomic`: read-modify-write operations that return the old value."""

    @staticmethod
    def add(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: old + v, val)

    @staticmethod
    def sub(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: old - v, val)

    @staticmethod
    def max(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: v if v > old else old, val)

    @staticmethod
    def min(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: v if v < old else old, val)

    @staticmethod
    def nanmax(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: v if math.isnan(old) or v > old else old, val)

    @staticmethod
    def nanmin(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: v if math.isnan(old) or v < old else old, val)

    @staticmethod
    def exch(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: v, val)

    @staticmethod
    def cas(ary, idx, old, val):
        return _apply_atomic(ary, idx, lambda cur, expected, v: v if cur == expected else cur, old, val)

    @staticmethod
    def compare_and_swap(ary, old, val):
        """cas on ary[0]."""
        return _apply_atomic(ary, 0, lambda cur, expected, v: v if cur == expected else cur, old, val)

    @staticmethod
    def inc(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: 0 if old >= v else old + 1, val)

    @staticmethod
    def dec(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: v if old == 0 or old > v else old - 1, val)

    @staticmethod
    def and_(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: old & v, val)

    @staticmethod
    def or_(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: old | v, val)

    @staticmethod
    def xor(ary, idx, val):
        return _apply_atomic(ary, idx, lambda old, v: old ^ v, val)


def _typing_error(message):
    """The error numba-cuda's compiler raises for code it cannot type (Numba's TypingError), as the launch's
    compile step would raise it; a TypeError where Numba is not installed."""
    try:
        from numba.core.errors import TypingError
    except ImportError:
        return TypeError(message)
    return TypingError(message)


def _alignment(alignment):
    """The bytes an array's start is aligned to, checked as numba-cuda checks `alignment=` (None: the
    dtype's)."""
    if alignment is None:
        return None
    if isinstance(alignment, bool) or not isinstance(alignment, numbers.Integral):
        raise _typing_error("RequireLiteralValue: alignment must be a constant integer")
    if alignment <= 0:
        raise ValueError("Alignment must be positive")
    if alignment & (alignment - 1):
        raise ValueError("Alignment must be a power of 2")
    if alignment % POINTER_BYTES:
        raise ValueError(f"Alignment must be a multiple of {POINTER_BYTES}")
    return int(alignment)


class _Shared:
    @staticmethod
    def array(shape, dtype, alignment=None):
        """A block-wide shared array; shape 0 gives the launch's dynamic shared memory."""
        return current.scheduler.shared_array(shape, dtype, sys._getframe(1), _alignment(alignment))


class _Local:
    @staticmethod
    def array(shape, dtype, alignment=None):
        """A per-thread array."""
        return current.scheduler.local_array(shape, dtype, _alignment(alignment))


class _Const:
    @staticmethod
    def array_like(ary):
        """A read-only copy of a host array."""
        return current.scheduler.const_array(ary)


class _GridGroup:
    """The group `cuda.cg.this_grid()` returns."""

    @staticmethod
    def sync():
        """A barrier for every thread of the grid: one block's barrier when the grid has one block."""
        scheduler = current.scheduler
        grid = scheduler.grid
        if grid.x * grid.y * grid.z > 1:
            raise UnsupportedError(
                "a grid-wide barrier (cuda.cg.this_grid().sync()) in a launch of several blocks",
                f"{who()} waits at cuda.cg.this_grid().sync() in a launch of {grid.x * grid.y * grid.z} "
                f"blocks; gpusim runs the blocks of a launch one after another, so no block can wait for "
                f"another.",
                "test the kernel with a grid of one block, or on a GPU.",
            )
        scheduler.barrier("syncthreads", None)


class _CooperativeGroups:
    """`cuda.cg`: cooperative groups."""

    grid = _GridGroup()

    @staticmethod
    def this_grid():
        return _CooperativeGroups.grid


def _refused(feature):
    def refused(*args, **kwargs):
        raise UnsupportedError(feature)

    return refused


class FakeCuda:
    """Stands in for a front end's `cuda` module (numba.cuda, numba_cuda_mlir.cuda) inside simulated
    kernels."""

    warpsize = WARP_SIZE
    atomic = _Atomic
    shared = _Shared
    local = _Local
    const = _Const
    local_array = staticmethod(_Local.array)  # numba_cuda_mlir's module-level aliases
    shared_array = staticmethod(_Shared.array)

    def __init__(self, translate):
        self._translate = translate
        self.threadIdx = self.blockIdx = self.blockDim = self.gridDim = Dim3(0, 0, 0)
        self.laneid = 0

    def __getattr__(self, name):
        """Anything else the kernel reads from `cuda` (float32, ...), taken from the imported front ends."""
        for module in frontends.cuda_modules():
            value = getattr(module, name, None)
            if value is None:
                continue
            translated = self._translate(value)
            if translated is value and callable(value) and not isinstance(value, type) and \
                    frontends.from_front_end(type(value)):
                return _refused(f"cuda.{name}")  # a front end's intrinsic that only a compiler understands
            return translated
        raise UnsupportedError(f"cuda.{name}")

    def member(self, name):
        """What a kernel gets for `from <front end>.cuda import name`."""
        if name == "laneid":
            raise TypeError(
                "gpusim cannot follow `laneid` imported by name from the cuda module: it changes from "
                "thread to thread. Read it as `cuda.laneid` instead."
            )
        return LiveDim3(self, name) if name in INDEX_NAMES else getattr(self, name)

    def grid(self, ndim):
        """Absolute thread position: an int for ndim=1, else a tuple."""
        t, b, d = self.threadIdx, self.blockIdx, self.blockDim
        if ndim == 1:
            return b.x * d.x + t.x
        if ndim == 2:
            return b.x * d.x + t.x, b.y * d.y + t.y
        return b.x * d.x + t.x, b.y * d.y + t.y, b.z * d.z + t.z

    def gridsize(self, ndim):
        """Total number of threads along each axis of the grid."""
        d, g = self.blockDim, self.gridDim
        if ndim == 1:
            return d.x * g.x
        if ndim == 2:
            return d.x * g.x, d.y * g.y
        return d.x * g.x, d.y * g.y, d.z * g.z

    @staticmethod
    def syncthreads():
        current.scheduler.barrier("syncthreads", None)

    @staticmethod
    def syncthreads_count(predicate):
        return current.scheduler.barrier("count", predicate)

    @staticmethod
    def syncthreads_and(predicate):
        return current.scheduler.barrier("and", predicate)

    @staticmethod
    def syncthreads_or(predicate):
        return current.scheduler.barrier("or", predicate)

    @staticmethod
    def threadfence():
        """A memory fence: orders the thread's accesses before it against those after it, for other threads
        that hand data over through a flag (gpusim.fences)."""
        current.scheduler.fence()

    threadfence_block = threadfence_system = threadfence

    @staticmethod
    def syncwarp(mask=FULL_MASK):
        current.scheduler.warp("syncwarp", mask, None, None)

    @staticmethod
    def shfl_sync(mask, value, src_lane):
        return current.scheduler.warp("shfl", mask, value, src_lane)

    @staticmethod
    def shfl_up_sync(mask, value, delta):
        return current.scheduler.warp("up", mask, value, delta)

    @staticmethod
    def shfl_down_sync(mask, value, delta):
        return current.scheduler.warp("down", mask, value, delta)

    @staticmethod
    def shfl_xor_sync(mask, value, lane_mask):
        return current.scheduler.warp("xor", mask, value, lane_mask)

    @staticmethod
    def ballot_sync(mask, predicate):
        return current.scheduler.warp("ballot", mask, predicate, None)

    @staticmethod
    def all_sync(mask, predicate):
        return current.scheduler.warp("all", mask, predicate, None)

    @staticmethod
    def any_sync(mask, predicate):
        return current.scheduler.warp("any", mask, predicate, None)

    @staticmethod
    def activemask():
        """Lanes of the calling warp that have not exited."""
        return current.scheduler.active_mask()

    @staticmethod
    def eq_sync(mask, predicate):
        return current.scheduler.warp("eq", mask, predicate, None)

    @staticmethod
    def match_any_sync(mask, value):
        return current.scheduler.warp("match_any", mask, value, None)

    @staticmethod
    def match_all_sync(mask, value):
        return current.scheduler.warp("match_all", mask, value, None)

    def lanemask_lt(self):
        return np.uint32((1 << self.laneid) - 1)

    fp16 = Fp16()
    libdevice = Libdevice()
    cg = _CooperativeGroups
    popc = staticmethod(intrinsics.popc)
    brev = staticmethod(intrinsics.brev)
    clz = staticmethod(intrinsics.clz)
    ffs = staticmethod(intrinsics.ffs)
    cbrt = staticmethod(intrinsics.cbrt)
    fma = staticmethod(intrinsics.fma)
    selp = staticmethod(intrinsics.selp)
    nanosleep = staticmethod(intrinsics.nanosleep)
    locals().update({name: staticmethod(load) for name, load in intrinsics.CACHE_HINTS.items()})


# The names a kernel may import from a front end's `cuda` module and get the fake's counterpart.
MEMBER_NAMES = frozenset(
    {name for name in dir(FakeCuda) if not name.startswith("_")} - {"member"} | {*INDEX_NAMES, "laneid"}
)

# The class Numba's own simulator stands in for `cuda` with (module, name); gpusim does not import it.
NUMBA_SIMULATOR_CUDA = ("numba.cuda.simulator.kernelapi", "FakeCUDAModule")


def is_cuda_stand_in(value) -> bool:
    """Whether `value` stands in for a front end's `cuda` module in a simulated kernel: gpusim's FakeCuda,
    or Numba's simulator's module (tools that read a kernel's globals treat both as `numba.cuda`)."""
    kind = (type(value).__module__, type(value).__name__)
    return isinstance(value, FakeCuda) or kind == NUMBA_SIMULATOR_CUDA
