"""Checked views of global and shared memory: bounds checks plus an access log for the checker.

Every element access appends two integers to the launch's log:
  1. the element's address in units of its itemsize (region base // itemsize + flat index);
  2. SILENT (for a write that stored the value the element held) | log2(itemsize) << 26 | kind << 24 |
     code tag << 16 | bytecode offset, where the code tag (stored in the globals of every rebound kernel and
     device function) names the learner function.
The checker turns these logs into races and counters. Region bases are at least 2**36 (memory.py), so
in the fast paths a numpy index narrower than int64 raises OverflowError when added to the base and
takes the general path instead of wrapping. The fast paths compute both integers before appending
either, so a failure never leaves half a pair in the log.
"""

import operator
import sys
from collections import namedtuple

import numpy as np

from .context import who
from .errors import KernelError, OutOfBoundsError, UnsupportedError
from .sites import TAG, describe, user_frame

READ_ONLY_ARGUMENT = "argument"  # Region.readonly of an argument whose NumPy writeable flag is off

READ, WRITE, ATOMIC = 0, 1, 2
SILENT = 1 << 29  # in a write's second integer: it stored the value the element already held
_Address = namedtuple("_Address", "data")
TAG_SHIFT = 16
KIND_SHIFT = 24
SIZE_SHIFT = 26
_getframe = sys._getframe


def _index_text(name, idx):
    parts = idx if isinstance(idx, tuple) else (idx,)
    return f"{name}[{', '.join(_part_text(p) for p in parts)}]"


def _part_text(part):
    if isinstance(part, slice):
        text = ":".join("" if v is None else str(v) for v in (part.start, part.stop))
        return text if part.step is None else f"{text}:{part.step}"
    return str(part)


def _as_int(value, name, idx):
    try:
        return operator.index(value)
    except TypeError:
        raise KernelError(
            f"{who()} indexed {_index_text(name, idx)} with {value!r} of type {type(value).__name__}.",
            "array indices must be integers: convert with int(...) or use // for division.",
        ) from None


class DeviceArray:
    """A checked view of one global or shared array (any number of dimensions)."""

    __slots__ = (
        "_flat",
        "shape",
        "_st",
        "_e0",
        "_kb",
        "_mr",
        "_mw",
        "_la",
        "region",
        "dtype",
        "ndim",
        "size",
        "_vals",
        "_b0",
    )

    def __init__(self, flat, shape, strides, e0, region, log, byte_offset=0):
        self._flat = flat
        self._vals = None
        self._b0 = region.base + byte_offset  # the address of flat[0], in bytes
        self.shape = tuple(shape)
        self._st = tuple(strides)
        self._e0 = e0
        self.region = region
        self._kb = (region.base + byte_offset) // flat.itemsize
        self._mr = (flat.itemsize.bit_length() - 1) << SIZE_SHIFT
        self._mw = self._mr + (WRITE << KIND_SHIFT)
        self._la = log.append
        self.dtype = flat.dtype
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        return self.shape[0]

    def __index__(self):
        """A 0-d integer array used as an index: its element, read (and logged)."""
        if self.ndim or self.dtype.kind not in "iub":
            raise TypeError(f"only a 0-d integer array can be an index, not {self.ndim}-d {self.dtype}")
        return int(self._access((), user_frame() or _getframe(1), READ))

    def __iter__(self):
        frame = user_frame()
        for i in range(self.shape[0]):
            yield self._access(i, frame, READ)

    def __repr__(self):
        return f"<gpusim {self.region.kind} array {self.region.name} shape={self.shape} dtype={self.dtype}>"

    def __getitem__(self, idx):
        return self._access(idx, _getframe(1), READ)

    def __setitem__(self, idx, value):
        self._access(idx, _getframe(1), WRITE, value)

    # `a[i]`, `a[i, j]`, `a[i] = v`, `a[i, j] = v` in a kernel that gpusim.sitecalls rewrote: `site` is what
    # the caller's frame would give (code tag + bytecode offset). The classes below have fast versions.
    def _r1(self, i, site):
        return self._access(i, _getframe(1), READ)

    def _r2(self, i, j, site):
        return self._access((i, j), _getframe(1), READ)

    def _w1(self, value, i, site):
        self._access(i, _getframe(1), WRITE, value)

    def _w2(self, value, i, j, site):
        self._access((i, j), _getframe(1), WRITE, value)

    def _access(self, idx, frame, kind, value=None):
        """The general path: element access, or a view for slices and partial indices."""
        parts = idx if isinstance(idx, tuple) else (idx,)
        if len(parts) > self.ndim:
            raise self._misuse(idx, kind, frame, f"a {self.ndim}-D array takes at most {self.ndim} indices")
        e = self._e0
        shape, strides = [], []
        for axis, part in enumerate(parts):
            size = self.shape[axis]
            if isinstance(part, slice):
                start, count, step = self._slice(part, size, idx, kind, frame)
                e += start * self._st[axis]
                shape.append(count)
                strides.append(self._st[axis] * step)
                continue
            i = _as_int(part, self.region.name, idx)
            if not 0 <= i < size:
                raise self._error(idx, kind, frame, self._bounds_text(i, axis, size))
            e += i * self._st[axis]
        if kind != READ and self.region.readonly:
            raise self._readonly(idx, kind, frame)
        if shape or len(parts) < self.ndim:
            shape += self.shape[len(parts) :]
            strides += self._st[len(parts) :]
            if kind == ATOMIC:
                raise self._misuse(idx, kind, frame, "an atomic updates one element, not a slice")
            if kind == WRITE:
                return self._view(shape, strides, e)._assign_all(value, frame)
            return self._view(shape, strides, e)
        return self._element(e, frame, kind, value)

    def _assign_all(self, value, frame):
        """`a[i:j] = value`: every element of this view written (and logged), `value` broadcast as NumPy does;
        an array value is read first, element by element."""
        if isinstance(value, DeviceArray):
            value = value._read_all(frame)
        values = np.broadcast_to(np.asarray(getattr(value, "_a", value)), self.shape)
        for index in np.ndindex(self.shape):
            self._access(index, frame, WRITE, values[index])

    def _view(self, shape, strides, e0):
        """A view of the same memory and dtype (a slice, a row, a reshape)."""
        return view(self, shape, strides, e0)

    def _element(self, e, frame, kind, value):
        if kind == READ:
            self._log(e, frame, kind)
            return self._flat[e]
        self._log(e, frame, kind, self._flat[e] == value)
        self._flat[e] = value
        if self._vals is not None:
            self._vals[e] = self._flat[e]
        return None

    def _log(self, e, frame, kind, silent=False):
        tag = frame.f_globals.get(TAG)
        if tag is None:
            frame = user_frame(1) or frame
            tag = frame.f_globals.get(TAG, 0)
        meta = self._mr + (kind << KIND_SHIFT) + tag + frame.f_lasti + (SILENT if silent else 0)
        self._la(self._kb + int(e))
        self._la(meta)

    def _slice(self, part, size, idx, kind, frame):
        """(first index, number of elements, step) of a slice along an axis of `size` elements, as Python and
        Numba slice: a negative bound counts from the end, bounds past the ends are clipped, and a negative
        step walks backwards (from the last element by default)."""
        step = 1 if part.step is None else _as_int(part.step, self.region.name, idx)
        if step == 0:
            raise self._misuse(idx, kind, frame, "a slice step cannot be zero")
        bounds = [None if b is None else _as_int(b, self.region.name, idx) for b in (part.start, part.stop)]
        start, stop, step = slice(*bounds, step).indices(size)
        count = len(range(start, stop, step))
        return (start if count else 0), count, step

    def _bounds_text(self, i, axis, size):
        if i < 0:
            return (f"index {i} is negative (Numba wraps it to the end of the axis silently, on a GPU too; "
                    f"CUDA C would read before the array; gpusim refuses it)")
        return f"index {i} is past the end of axis {axis}, which has size {size}"

    def _where(self, idx, kind, frame, reason):
        verb = ("read", "wrote", "atomically updated")[kind]
        place = describe(frame.f_code, frame.f_lasti) if frame is not None else "?"
        return f"{who()} {verb} {_index_text(self.region.name, idx)} at {place}: {reason}."

    def _readonly(self, idx, kind, frame):
        if self.region.readonly == READ_ONLY_ARGUMENT:
            return KernelError(
                self._where(idx, kind, frame, f"{self.region.name} is a read-only NumPy array (its writeable "
                            f"flag is off), which Numba refuses to compile a write into"),
                "leave the kernel's inputs as they are: write results into an output argument, and keep "
                "scratch values in shared or local memory.",
            )
        return KernelError(
            self._where(idx, kind, frame, f"{self.region.name} is a NumPy array from outside the kernel (a "
                        f"module-level or captured variable), which Numba freezes into read-only constant "
                        f"memory"),
            "pass the array as a kernel argument if the kernel must write it.",
        )

    def _misuse(self, idx, kind, frame, reason):
        return KernelError(self._where(idx, kind, frame, reason), "index arrays as in CUDA: a[i] or a[i, j].")

    def _error(self, idx, kind, frame, reason):
        """OutOfBoundsError; past the end of dynamic shared memory, it says how many bytes the launch gave."""
        message = self._where(idx, kind, frame, reason)
        if self.region.dynamic:
            return OutOfBoundsError(
                f"{message} It is past the end of the {self.region.nbytes} bytes of dynamic shared memory "
                f"the launch gave.",
                "check the index and where each view of the dynamic array starts and ends: both must follow "
                "the sizes the kernel works with (its tile width, its block size), not a fixed constant; "
                "where you launch the kernel yourself, the 4th launch parameter must give enough bytes.",
            )
        return OutOfBoundsError(message)

    def atomic(self, idx, op, frame, *operands):
        """Apply an atomic read-modify-write `op(old, *operands) -> new`; return the old value, the new one
        and the element's address (in units of its itemsize, as logged)."""
        parts = idx if isinstance(idx, tuple) else (idx,)
        if len(parts) != self.ndim or any(isinstance(p, slice) for p in parts):
            raise self._misuse(idx, ATOMIC, frame, "atomics need one integer index per dimension")
        if self.region.readonly:
            raise self._readonly(idx, ATOMIC, frame)
        e = self._e0
        for axis, part in enumerate(parts):
            i = _as_int(part, self.region.name, idx)
            if not 0 <= i < self.shape[axis]:
                raise self._error(idx, ATOMIC, frame, self._bounds_text(i, axis, self.shape[axis]))
            e += i * self._st[axis]
        self._log(e, frame, ATOMIC)
        old = self._flat[e]
        new = op(old, *operands)
        self._flat[e] = new
        if self._vals is not None:
            self._vals[e] = self._flat[e]
        return old, new, self._kb + e

    def _read_all(self, frame):
        """Every element of the view as an array, each read (and logged) by the calling thread."""
        values = [self._access(index, frame, READ) for index in np.ndindex(self.shape)]
        return np.array(values, dtype=self.dtype).reshape(self.shape)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """A NumPy ufunc over whole arrays (`np.sin(x, out)`), which Numba compiles to a loop in the calling
        thread: every element of the inputs is read and every element of the outputs written, each logged."""
        frame = _getframe(1)
        if method != "__call__":
            raise UnsupportedError(f"np.{ufunc.__name__}.{method}")
        outputs = list(kwargs.pop("out", None) or inputs[ufunc.nin:])
        inputs = inputs[: ufunc.nin]
        values = [x._read_all(frame) if isinstance(x, DeviceArray) else getattr(x, "_a", x) for x in inputs]
        results = ufunc(*values, **kwargs)
        results = results if isinstance(results, tuple) else (results,)
        for out, result in zip(outputs, results, strict=False):
            if isinstance(out, DeviceArray):
                result = np.broadcast_to(np.asarray(result).astype(out.dtype, casting="unsafe"), out.shape)
                for index in np.ndindex(out.shape):
                    out._access(index, frame, WRITE, result[index])
            elif out is not None:
                out[...] = result
        if outputs:
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        return results[0] if len(results) == 1 else results

    # The reductions Numba compiles for arrays in a kernel: a loop over the elements in the calling thread.
    def sum(self, *args, **kwargs):
        return self._read_all(_getframe(1)).sum(*args, **kwargs)

    def prod(self, *args, **kwargs):
        return self._read_all(_getframe(1)).prod(*args, **kwargs)

    def mean(self, *args, **kwargs):
        return self._read_all(_getframe(1)).mean(*args, **kwargs)

    def argmax(self, *args, **kwargs):
        return self._read_all(_getframe(1)).argmax(*args, **kwargs)

    def argmin(self, *args, **kwargs):
        return self._read_all(_getframe(1)).argmin(*args, **kwargs)

    def any(self, *args, **kwargs):
        return self._read_all(_getframe(1)).any(*args, **kwargs)

    def all(self, *args, **kwargs):
        return self._read_all(_getframe(1)).all(*args, **kwargs)

    # Reshaping and reinterpreting, as Numba allows in kernels (gpusim.arrayviews).
    def reshape(self, *shape):
        from . import arrayviews

        return arrayviews.reshape(self, shape)

    def ravel(self):
        from . import arrayviews

        return arrayviews.ravel(self)

    def transpose(self):
        from . import arrayviews

        return arrayviews.transpose(self)

    T = property(transpose)

    def view(self, dtype):
        from . import arrayviews

        return arrayviews.view_as(self, dtype)

    @property
    def real(self):
        from . import arrayviews

        return arrayviews.part(self, "real")

    @property
    def imag(self):
        from . import arrayviews

        return arrayviews.part(self, "imag")

    def copy(self):
        from . import arrayviews

        return arrayviews.copy(self, _getframe(1), self.region.name)

    @property
    def ctypes(self):
        """`.ctypes.data`: the address of the first element, as gpusim's counters place arrays (every array
        starts at least 256-byte aligned, as cudaMalloc gives them and as a shared array's alignment=
        asks)."""
        return _Address((self._kb + self._e0) * self.dtype.itemsize)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def strides(self):
        return tuple(stride * self.dtype.itemsize for stride in self._st)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedError(
            f"the array attribute .{name}",
            f"{who()} uses .{name} of array {self.region.name}, which gpusim does not simulate.",
        )

    def to_numpy(self):
        """A copy of the elements this view covers, without logging accesses."""
        itemsize = self._flat.itemsize
        strides = tuple(stride * itemsize for stride in self._st)
        return np.lib.stride_tricks.as_strided(self._flat[self._e0 :], self.shape, strides).copy()

    def index_of(self, byte_offset):
        """The multi-index of the element at `byte_offset` of this array's region (for messages)."""
        e = byte_offset // self._flat.itemsize - self._e0
        parts = []
        for stride in self._st:
            parts.append(e // stride)
            e %= stride
        return parts[0] if len(parts) == 1 else tuple(parts)


class DeviceArray1D(DeviceArray):
    """Fast path for one index."""

    __slots__ = ()

    def __getitem__(self, i):
        try:
            if 0 <= i < self.shape[0]:
                e = self._e0 + i * self._st[0]
                f = _getframe(1)
                meta = self._mr + f.f_lasti + f.f_globals[TAG]
                la = self._la
                la(self._kb + e)
                la(meta)
                return self._flat[e]
        except (TypeError, KeyError, OverflowError):
            pass
        return self._access(i, _getframe(1), READ)

    def __setitem__(self, i, value):
        try:
            if 0 <= i < self.shape[0]:
                e = self._e0 + i * self._st[0]
                f = _getframe(1)
                meta = self._mw + f.f_lasti + f.f_globals[TAG] + (SILENT if self._flat[e] == value else 0)
                la = self._la
                la(self._kb + e)
                la(meta)
                self._flat[e] = value
                vals = self._vals
                if vals is not None:
                    vals[e] = self._flat[e]
                return
        except (TypeError, KeyError, OverflowError):
            pass
        self._access(i, _getframe(1), WRITE, value)


class DeviceArray2D(DeviceArray):
    """Fast path for two indices."""

    __slots__ = ()

    def __getitem__(self, idx):
        try:
            i, j = idx
            n0, n1 = self.shape
            if 0 <= i < n0 and 0 <= j < n1:
                s0, s1 = self._st
                e = self._e0 + i * s0 + j * s1
                f = _getframe(1)
                meta = self._mr + f.f_lasti + f.f_globals[TAG]
                la = self._la
                la(self._kb + e)
                la(meta)
                return self._flat[e]
        except (TypeError, ValueError, KeyError, OverflowError):
            pass
        return self._access(idx, _getframe(1), READ)

    def __setitem__(self, idx, value):
        try:
            i, j = idx
            n0, n1 = self.shape
            if 0 <= i < n0 and 0 <= j < n1:
                s0, s1 = self._st
                e = self._e0 + i * s0 + j * s1
                f = _getframe(1)
                meta = self._mw + f.f_lasti + f.f_globals[TAG] + (SILENT if self._flat[e] == value else 0)
                la = self._la
                la(self._kb + e)
                la(meta)
                self._flat[e] = value
                vals = self._vals
                if vals is not None:
                    vals[e] = self._flat[e]
                return
        except (TypeError, ValueError, KeyError, OverflowError):
            pass
        self._access(idx, _getframe(1), WRITE, value)


class DeviceArray3D(DeviceArray):
    """Fast path for three indices (a double-buffered tile, heads x rows x columns)."""

    __slots__ = ()

    def __getitem__(self, idx):
        try:
            i, j, k = idx
            n0, n1, n2 = self.shape
            if 0 <= i < n0 and 0 <= j < n1 and 0 <= k < n2:
                s0, s1, s2 = self._st
                e = self._e0 + i * s0 + j * s1 + k * s2
                f = _getframe(1)
                meta = self._mr + f.f_lasti + f.f_globals[TAG]
                la = self._la
                la(self._kb + e)
                la(meta)
                return self._flat[e]
        except (TypeError, ValueError, KeyError, OverflowError):
            pass
        return self._access(idx, _getframe(1), READ)

    def __setitem__(self, idx, value):
        try:
            i, j, k = idx
            n0, n1, n2 = self.shape
            if 0 <= i < n0 and 0 <= j < n1 and 0 <= k < n2:
                s0, s1, s2 = self._st
                e = self._e0 + i * s0 + j * s1 + k * s2
                f = _getframe(1)
                meta = self._mw + f.f_lasti + f.f_globals[TAG] + (SILENT if self._flat[e] == value else 0)
                la = self._la
                la(self._kb + e)
                la(meta)
                self._flat[e] = value
                vals = self._vals
                if vals is not None:
                    vals[e] = self._flat[e]
                return
        except (TypeError, ValueError, KeyError, OverflowError):
            pass
        self._access(idx, _getframe(1), WRITE, value)


class Contiguous1D(DeviceArray):
    """Fastest path: a whole 1-D argument or shared array."""

    __slots__ = ("_n0",)

    def __getitem__(self, i):
        try:
            if 0 <= i < self._n0:
                f = _getframe(1)
                meta = self._mr + f.f_lasti + f.f_globals[TAG]
                la = self._la
                la(self._kb + i)
                la(meta)
                return self._flat[i]
        except (TypeError, KeyError, OverflowError):
            pass
        return self._access(i, _getframe(1), READ)

    def __setitem__(self, i, value):
        try:
            if 0 <= i < self._n0:
                f = _getframe(1)
                meta = self._mw + f.f_lasti + f.f_globals[TAG] + (SILENT if self._flat[i] == value else 0)
                la = self._la
                la(self._kb + i)
                la(meta)
                self._flat[i] = value
                vals = self._vals
                if vals is not None:
                    vals[i] = self._flat[i]
                return
        except (TypeError, KeyError, OverflowError):
            pass
        self._access(i, _getframe(1), WRITE, value)


    def _r1(self, i, site):
        try:
            if 0 <= i < self._n0:
                la = self._la
                la(self._kb + i)
                la(self._mr + site)
                return self._flat[i]
        except (TypeError, OverflowError):
            pass
        return self._access(i, _getframe(1), READ)

    def _w1(self, value, i, site):
        try:
            if 0 <= i < self._n0:
                meta = self._mw + site + (SILENT if self._flat[i] == value else 0)
                la = self._la
                la(self._kb + i)
                la(meta)
                self._flat[i] = value
                vals = self._vals
                if vals is not None:
                    vals[i] = self._flat[i]
                return
        except (TypeError, OverflowError):
            pass
        self._access(i, _getframe(1), WRITE, value)


class Contiguous2D(DeviceArray):
    """Fastest path: a whole 2-D argument or shared array in C order."""

    __slots__ = ("_n0", "_n1")

    def __getitem__(self, idx):
        try:
            i, j = idx
            n1 = self._n1
            if 0 <= j < n1 and 0 <= i < self._n0:
                e = i * n1 + j
                f = _getframe(1)
                meta = self._mr + f.f_lasti + f.f_globals[TAG]
                la = self._la
                la(self._kb + e)
                la(meta)
                return self._flat[e]
        except (TypeError, ValueError, KeyError, OverflowError):
            pass
        return self._access(idx, _getframe(1), READ)

    def __setitem__(self, idx, value):
        try:
            i, j = idx
            n1 = self._n1
            if 0 <= j < n1 and 0 <= i < self._n0:
                e = i * n1 + j
                f = _getframe(1)
                meta = self._mw + f.f_lasti + f.f_globals[TAG] + (SILENT if self._flat[e] == value else 0)
                la = self._la
                la(self._kb + e)
                la(meta)
                self._flat[e] = value
                vals = self._vals
                if vals is not None:
                    vals[e] = self._flat[e]
                return
        except (TypeError, ValueError, KeyError, OverflowError):
            pass
        self._access(idx, _getframe(1), WRITE, value)


    def _r2(self, i, j, site):
        try:
            n1 = self._n1
            if 0 <= j < n1 and 0 <= i < self._n0:
                e = i * n1 + j
                la = self._la
                la(self._kb + e)
                la(self._mr + site)
                return self._flat[e]
        except (TypeError, OverflowError):
            pass
        return self._access((i, j), _getframe(1), READ)

    def _w2(self, value, i, j, site):
        try:
            n1 = self._n1
            if 0 <= j < n1 and 0 <= i < self._n0:
                e = i * n1 + j
                meta = self._mw + site + (SILENT if self._flat[e] == value else 0)
                la = self._la
                la(self._kb + e)
                la(meta)
                self._flat[e] = value
                vals = self._vals
                if vals is not None:
                    vals[e] = self._flat[e]
                return
        except (TypeError, ValueError, OverflowError):
            pass
        self._access((i, j), _getframe(1), WRITE, value)


class Mirrored1D(Contiguous1D):
    """A whole 1-D static shared array whose elements are also kept as a list of NumPy scalars (`_vals`, which
    every write updates): a read takes its element from the list, which is quicker than indexing NumPy."""

    __slots__ = ()

    def __getitem__(self, i):
        try:
            if 0 <= i < self._n0:
                f = _getframe(1)
                meta = self._mr + f.f_lasti + f.f_globals[TAG]
                la = self._la
                la(self._kb + i)
                la(meta)
                return self._vals[i]
        except (TypeError, KeyError, OverflowError):
            pass
        return self._access(i, _getframe(1), READ)


    def _r1(self, i, site):
        try:
            if 0 <= i < self._n0:
                la = self._la
                la(self._kb + i)
                la(self._mr + site)
                return self._vals[i]
        except (TypeError, OverflowError):
            pass
        return self._access(i, _getframe(1), READ)


class Mirrored2D(Contiguous2D):
    """A whole 2-D static shared array in C order, read from its list of elements (see Mirrored1D)."""

    __slots__ = ()

    def __getitem__(self, idx):
        try:
            i, j = idx
            n1 = self._n1
            if 0 <= j < n1 and 0 <= i < self._n0:
                e = i * n1 + j
                f = _getframe(1)
                meta = self._mr + f.f_lasti + f.f_globals[TAG]
                la = self._la
                la(self._kb + e)
                la(meta)
                return self._vals[e]
        except (TypeError, ValueError, KeyError, OverflowError):
            pass
        return self._access(idx, _getframe(1), READ)


    def _r2(self, i, j, site):
        try:
            n1 = self._n1
            if 0 <= j < n1 and 0 <= i < self._n0:
                e = i * n1 + j
                la = self._la
                la(self._kb + e)
                la(self._mr + site)
                return self._vals[e]
        except (TypeError, OverflowError):
            pass
        return self._access((i, j), _getframe(1), READ)


class _RefusesWrites:
    """Writes refused, with the reason the region is read-only (see DeviceArray._readonly)."""

    __slots__ = ()

    def __setitem__(self, idx, value):
        raise self._readonly(idx, WRITE, _getframe(1))

    def _w1(self, value, i, site):
        raise self._readonly(i, WRITE, _getframe(1))

    def _w2(self, value, i, j, site):
        raise self._readonly((i, j), WRITE, _getframe(1))


class ReadOnlyArray(_RefusesWrites, DeviceArray):
    """A read-only array (see Region.readonly) of any layout."""

    __slots__ = ()


class ReadOnlyContiguous1D(_RefusesWrites, Contiguous1D):
    """A read-only whole 1-D array: Contiguous1D's fast reads."""

    __slots__ = ()


class ReadOnlyContiguous2D(_RefusesWrites, Contiguous2D):
    """A read-only whole 2-D array: Contiguous2D's fast reads."""

    __slots__ = ()


_BY_NDIM = {1: DeviceArray1D, 2: DeviceArray2D, 3: DeviceArray3D}
_CONTIGUOUS = {1: Contiguous1D, 2: Contiguous2D}
_MIRRORED = {1: Mirrored1D, 2: Mirrored2D}
_READ_ONLY = {1: ReadOnlyContiguous1D, 2: ReadOnlyContiguous2D}


def device_array(flat, shape, strides, e0, region, log, byte_offset=0, mirror=False):
    """A checked array of the fastest class for its number of dimensions and layout. mirror=True (for memory
    that no other array aliases: a static shared array) also keeps the elements in a list for quick reads."""
    if flat.dtype.names:
        from .records import RecordArray

        return RecordArray(flat, shape, strides, e0, region, log, byte_offset)
    contiguous = e0 == 0 and len(shape) in _CONTIGUOUS and tuple(strides) == tuple(shape[1:]) + (1,)
    if region.readonly and not contiguous:
        return ReadOnlyArray(flat, shape, strides, e0, region, log, byte_offset)
    if contiguous:
        classes = _READ_ONLY if region.readonly else _MIRRORED if mirror else _CONTIGUOUS
        arr = classes[len(shape)](flat, shape, strides, e0, region, log, byte_offset)
        arr._n0 = shape[0]
        if len(shape) == 2:
            arr._n1 = shape[1]
        if mirror:
            arr._vals = list(flat)
        return arr
    cls = _BY_NDIM.get(len(shape), DeviceArray)
    return cls(flat, shape, strides, e0, region, log, byte_offset)


def view(parent, shape, strides, e0):
    """A checked view (slice or row) that shares the parent's memory, region and log."""
    cls = ReadOnlyArray if parent.region.readonly else _BY_NDIM.get(len(shape), DeviceArray)
    arr = cls.__new__(cls)
    for slot in ("_flat", "_kb", "_mr", "_mw", "_la", "region", "dtype", "_vals", "_b0"):
        setattr(arr, slot, getattr(parent, slot))
    arr.shape = tuple(shape)
    arr._st = tuple(strides)
    arr._e0 = e0
    arr.ndim = len(arr.shape)
    arr.size = int(np.prod(arr.shape, dtype=np.int64))
    return arr


class BoundsCheckedArray:
    """A local or constant array: bounds-checked, not tracked for races."""

    __slots__ = ("_a", "name", "writable", "shape", "dtype", "ndim", "size")

    def __init__(self, array, name, writable):
        self._a = array
        self.name = name
        self.writable = writable
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim
        self.size = array.size

    def __len__(self):
        return self.shape[0]

    def _check(self, idx, verb):
        parts = idx if isinstance(idx, tuple) else (idx,)
        for axis, part in enumerate(parts):
            if isinstance(part, slice) or axis >= self.ndim:
                continue
            i = _as_int(part, self.name, idx)
            if not 0 <= i < self.shape[axis]:
                frame = user_frame(3)
                place = describe(frame.f_code, frame.f_lasti) if frame else "?"
                raise OutOfBoundsError(
                    f"{who()} {verb} {_index_text(self.name, idx)} at {place}: index {i} is outside "
                    f"axis {axis} of size {self.shape[axis]}."
                )

    def __getitem__(self, idx):
        self._check(idx, "read")
        return self._a[idx]

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """A ufunc over the thread's own array: NumPy's, on the values."""
        def plain(value):
            return value._a if isinstance(value, BoundsCheckedArray) else value

        if "out" in kwargs:
            kwargs["out"] = tuple(plain(out) for out in kwargs["out"])
        result = getattr(ufunc, method)(*map(plain, inputs), **kwargs)
        if isinstance(result, np.ndarray):
            return BoundsCheckedArray(result, self.name, True)
        return result

    def __getattr__(self, name):
        """NumPy's attributes and methods (reshape, view, T, copy, ...); arrays they give stay
        bounds-checked."""
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._a, name)
        if isinstance(value, np.ndarray):
            return BoundsCheckedArray(value, self.name, self.writable)
        if not callable(value):
            return value
        writable = self.writable or name == "copy"

        def method(*args, **kwargs):
            result = value(*args, **kwargs)
            if isinstance(result, np.ndarray):
                return BoundsCheckedArray(result, self.name, writable)
            return result

        return method

    def sum(self, *args, **kwargs):
        return self._a.sum(*args, **kwargs)

    def prod(self, *args, **kwargs):
        return self._a.prod(*args, **kwargs)

    def mean(self, *args, **kwargs):
        return self._a.mean(*args, **kwargs)

    def argmax(self, *args, **kwargs):
        return self._a.argmax(*args, **kwargs)

    def argmin(self, *args, **kwargs):
        return self._a.argmin(*args, **kwargs)

    def any(self, *args, **kwargs):
        return self._a.any(*args, **kwargs)

    def all(self, *args, **kwargs):
        return self._a.all(*args, **kwargs)

    def __setitem__(self, idx, value):
        if not self.writable:
            raise KernelError(
                f"{who()} wrote to the constant array {self.name}.", "constant memory is read-only."
            )
        self._check(idx, "wrote")
        self._a[idx] = value
