"""Run a kernel once under gpusim with every access recorded, and describe the arrays it touched."""

import inspect
from dataclasses import dataclass, field

import numpy as np

from ..checker import Access
from ..errors import KernelError
from ..launch import Kernel, jit

SHARED_ITEMSIZE = 4  # the trace does not carry shared arrays' dtypes; float32/int32 is the common case


@dataclass
class ArrayInfo:
    """What a view needs to draw one array: its shape, bytes per element and memory space."""

    name: str
    shape: tuple
    itemsize: int
    space: str  # "global" or "shared"


@dataclass
class Recording:
    """One recorded launch: trace, report (None after an error), the error, and the arrays it touched."""

    name: str
    grid: tuple
    block: tuple
    trace: list
    report: object
    error: KernelError | None
    arrays: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    snapshots: list = field(default_factory=list)  # gpusim SharedSnapshot: shared values after each phase

    def shared_values(self, block, epoch):
        """{shared array name: values} of `block` at the end of phase `epoch` ({} if not recorded)."""
        for snapshot in self.snapshots:
            if snapshot.block == tuple(block) and snapshot.epoch == epoch:
                return snapshot.arrays
        return {}

    @property
    def threads_per_block(self):
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def block_count(self):
        return self.grid[0] * self.grid[1] * self.grid[2]

    def block_id(self, linear):
        """(x, y, z) of the block with this linear number (x fastest, as CUDA numbers them)."""
        return unlinear(linear, self.grid)

    def thread_id(self, linear):
        """(x, y, z) of the thread with this linear number inside its block (x fastest)."""
        return unlinear(linear, self.block)

    def accesses(self, block=None, thread=None, array=None):
        """The trace filtered by block, thread (each an int or (x, y, z)) and array name."""
        block = None if block is None else dim3(block, self.grid)
        thread = None if thread is None else dim3(thread, self.block)
        return [
            a for a in self.trace
            if (block is None or tuple(a.block) == block)
            and (thread is None or tuple(a.thread) == thread)
            and (array is None or a.array == array)
        ]

    def written(self, array):
        """Boolean mask of the elements of `array` that some thread wrote (or updated atomically)."""
        mask = np.zeros(self.arrays[array].shape, dtype=bool)
        for a in self.trace:
            if a.array == array and a.kind != "read":
                mask[a.index] = True
        return mask


def dim3(value, limits):
    """A block or thread given as a linear int or a 1-3 tuple, as an (x, y, z) tuple within `limits`."""
    if isinstance(value, (int, np.integer)):
        return unlinear(int(value), limits)
    parts = tuple(int(v) for v in value) + (0,) * (3 - len(value))
    if not all(0 <= p < n for p, n in zip(parts, limits, strict=True)):
        raise ValueError(f"{tuple(value)} is outside {tuple(limits)}.")
    return parts


def unlinear(linear, limits):
    x_size, y_size, z_size = limits
    if not 0 <= linear < x_size * y_size * z_size:
        raise ValueError(f"number {linear} is outside 0..{x_size * y_size * z_size - 1} for {tuple(limits)}.")
    return (linear % x_size, linear // x_size % y_size, linear // (x_size * y_size))


def linear(xyz, limits):
    return xyz[0] + limits[0] * (xyz[1] + limits[1] * xyz[2])


def _as_tuple(dims):
    parts = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    return tuple(int(p) for p in parts) + (1,) * (3 - len(parts))


def _copy(arg):
    if isinstance(arg, np.ndarray):
        return arg.copy()
    if hasattr(arg, "clone") and hasattr(arg, "numpy"):  # a torch tensor
        return arg.clone()
    return arg


def _shared_shapes(trace, known):
    """Shapes of shared arrays, from the largest index each was accessed at (the trace has no shapes)."""
    shapes = {}
    for a in trace:
        if a.array in known:
            continue
        index = a.index if isinstance(a.index, tuple) else (a.index,)
        old = shapes.get(a.array, (0,) * len(index))
        shapes[a.array] = tuple(max(o, i + 1) for o, i in zip(old, index, strict=True))
    return shapes


def record(kernel, grid, block, args=(), shared_bytes=0, shared_itemsize=SHARED_ITEMSIZE):
    """Run `kernel[grid, block](*args)` once under gpusim, recording every access. Arguments are copied
    first, so the caller's arrays are left alone; the copies (the kernel's outputs) are in `outputs`.
    A kernel error (a race, say) is kept in `error` with the trace up to it, not raised."""
    if isinstance(kernel, Recording):
        return kernel
    py_func = kernel.py_func if isinstance(kernel, Kernel) else None
    recorder = jit(py_func or kernel, record=True)
    copies = [_copy(arg) for arg in args]
    error = None
    try:
        recorder[grid, block, 0, shared_bytes](*copies)
    except KernelError as caught:
        error = caught
    names = list(inspect.signature(recorder.py_func).parameters)
    arrays, outputs = {}, {}
    for name, copy in zip(names, copies, strict=False):
        if hasattr(copy, "shape") and hasattr(copy, "dtype"):
            values = copy.numpy() if hasattr(copy, "clone") else copy
            arrays[name] = ArrayInfo(name, tuple(values.shape), values.dtype.itemsize, "global")
            outputs[name] = values
    trace = list(recorder.trace or [])
    snapshots = list(recorder.snapshots or [])
    for name, shape in _shared_shapes(trace, arrays).items():
        arrays[name] = ArrayInfo(name, shape, shared_itemsize, "shared")
    for snapshot in snapshots[:1]:  # the real shapes and element sizes of the shared arrays
        for name, values in snapshot.arrays.items():
            arrays[name] = ArrayInfo(name, values.shape, values.dtype.itemsize, "shared")
    return Recording(recorder.__name__, _as_tuple(grid), _as_tuple(block), trace, recorder.report, error,
                     arrays, outputs, snapshots)


__all__ = ["Access", "ArrayInfo", "Recording", "record"]
