"""What a kernel may do with a checked array besides indexing it, as Numba allows: `reshape`,
`view(dtype)`, `.real` and `.imag`, `.T`, `copy()`, `ravel()`; every result but `copy()` is a view of the same
memory, checked and logged like the array itself.

A view of another dtype (`RetypedArray`) numbers its elements in its own itemsize. Reads and writes through it
take the general path, and refresh the element list that a static shared array keeps for quick reads
(gpusim.arrays.Mirrored1D) wherever they change its bytes.
"""

import operator

import numpy as np

from .arrays import KIND_SHIFT, READ, SIZE_SHIFT, WRITE, BoundsCheckedArray, DeviceArray, ReadOnlyArray
from .context import who
from .errors import KernelError, UnsupportedError
from .memory import c_strides


class RetypedArray(DeviceArray):
    """A view of another dtype than the memory it views (`view(dtype)`, `.real`, `.imag`)."""

    __slots__ = ("_mirror", "_mirror_flat")

    def _element(self, e, frame, kind, value):
        result = super()._element(e, frame, kind, value)
        if kind != READ:
            self._refresh(e)
        return result

    def atomic(self, idx, op, frame, *operands):
        old, new, address = super().atomic(idx, op, frame, *operands)
        self._refresh(address - self._kb)
        return old, new, address

    def _view(self, shape, strides, e0):
        return retyped(self, self._flat, self._kb, shape, strides, e0)

    def _refresh(self, e):
        """Copy the changed element's bytes into the viewed shared array's element list, if it keeps one."""
        if self._mirror is None:
            return
        size, mirror_size = self._flat.itemsize, self._mirror_flat.itemsize
        first = (int(e) * size) // mirror_size
        last = ((int(e) + 1) * size - 1) // mirror_size
        for k in range(first, last + 1):
            self._mirror[k] = self._mirror_flat[k]


def retyped(parent, flat, kb, shape, strides, e0):
    """A view of `parent`'s memory as `flat`'s dtype: element e of it is flat[e], at address (kb + e) *
    itemsize."""
    cls = RetypedArray if not parent.region.readonly else _ReadOnlyRetyped
    arr = cls.__new__(cls)
    arr._flat = flat
    arr._kb = kb
    arr._b0 = kb * flat.itemsize
    arr._mr = (flat.itemsize.bit_length() - 1) << SIZE_SHIFT
    arr._mw = arr._mr + (WRITE << KIND_SHIFT)
    arr._la = parent._la
    arr.region = parent.region
    arr.dtype = flat.dtype
    arr._vals = None
    arr.shape = tuple(shape)
    arr._st = tuple(strides)
    arr._e0 = e0
    arr.ndim = len(arr.shape)
    arr.size = int(np.prod(arr.shape, dtype=np.int64))
    if isinstance(parent, RetypedArray):
        arr._mirror, arr._mirror_flat = parent._mirror, parent._mirror_flat
    else:
        arr._mirror, arr._mirror_flat = parent._vals, parent._flat
    return arr


class _ReadOnlyRetyped(RetypedArray, ReadOnlyArray):
    __slots__ = ()


def _c_contiguous(arr):
    return arr._st == c_strides(arr.shape) or arr.size <= 1


def reshape(arr, shape):
    """`arr.reshape(shape)`: a C-contiguous array seen with another shape (one axis may be -1)."""
    if len(shape) == 1 and isinstance(shape[0], tuple):
        shape = shape[0]
    shape = [operator.index(s) for s in shape]
    if shape.count(-1) == 1:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        shape[shape.index(-1)] = arr.size // known if known else 0
    if int(np.prod(shape, dtype=np.int64)) != arr.size or any(s < 0 for s in shape):
        raise KernelError(f"{who()}: cannot reshape an array of shape {arr.shape} to {tuple(shape)}.",
                          "the new shape must have as many elements as the array (Numba raises "
                          "NotImplementedError('incompatible shape for array')).")
    if not _c_contiguous(arr):
        raise UnsupportedError("reshape of an array that is not C-contiguous",
                               f"{who()} reshapes a view of shape {arr.shape} that is not C-contiguous; "
                               f"Numba reshapes only contiguous arrays.")
    return arr._view(shape, c_strides(shape), arr._e0)


def ravel(arr):
    return reshape(arr, (arr.size,))


def transpose(arr):
    """`arr.T`: the axes in reverse order, the same memory."""
    return arr._view(arr.shape[::-1], arr._st[::-1], arr._e0)


def view_as(arr, dtype):
    """`arr.view(dtype)`: the same bytes as another dtype; the last axis must be contiguous."""
    dtype = np.dtype(dtype if not hasattr(dtype, "bitwidth") else str(dtype))
    old, new = arr.dtype.itemsize, dtype.itemsize
    shape, strides, e0 = list(arr.shape), list(arr._st), arr._e0
    if old != new:
        contiguous_last = not shape or strides[-1] == 1 or shape[-1] == 1
        if not contiguous_last or (shape and shape[-1] * old % new) or any(s * old % new for s in
        strides[:-1]) \
                or e0 * old % new or arr._kb * old % new:
            raise KernelError(
                f"{who()}: cannot view an array of {arr.dtype} with shape {arr.shape} as {dtype}.",
                "Numba views an array as another dtype only when its last axis is contiguous and its bytes "
                "divide evenly into the new items.")
        if shape:
            shape[-1] = shape[-1] * old // new
            strides = [s * old // new for s in strides[:-1]] + [1]
        e0 = e0 * old // new
    raw = arr._flat.view(np.uint8)
    flat = raw[: len(raw) // new * new].view(dtype)
    return retyped(arr, flat, arr._kb * old // new, shape, strides, e0)


def part(arr, which):
    """`arr.real` or `arr.imag` of a complex array: a float view of every other float; of a real array, itself
    (`.real`)."""
    if arr.dtype.kind != "c":
        if which == "real":
            return arr
        raise UnsupportedError(".imag of an array of real numbers")
    half = np.dtype(f"f{arr.dtype.itemsize // 2}")
    flat = arr._flat.view(half)
    strides = [2 * s for s in arr._st]
    return retyped(arr, flat, arr._kb * 2, arr.shape, strides, 2 * arr._e0 + (which == "imag"))


def copy(arr, frame, name):
    """`arr.copy()`: a new array of the calling thread with the values (each element read and logged)."""
    return BoundsCheckedArray(arr._read_all(frame).copy(), f"{name} copy", writable=True)

