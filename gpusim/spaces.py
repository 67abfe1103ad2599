"""cuda.shared / cuda.local / cuda.const arrays for the scheduler: one shared array per call site and
block (dynamic ones carved from the launch's bytes), bounds-checked local and constant arrays."""

import linecache
import operator

import numpy as np

from . import sites
from .arrays import BoundsCheckedArray, DeviceArray
from .context import who
from .errors import ResourceError, UnsupportedError
from .memory import STATIC_SHARED_LIMIT, name_from_line


def _normalize_shape(shape, what):
    parts = shape if isinstance(shape, tuple) else (shape,)
    try:
        return tuple(operator.index(p) for p in parts)
    except TypeError:
        raise ResourceError(
            f"{who()}: {what} needs a shape of integers known before launch, got {shape!r}."
        ) from None


def _as_dtype(dtype):
    try:
        return np.dtype(dtype)
    except TypeError:
        pass
    try:
        return np.dtype(str(dtype))
    except TypeError:
        raise UnsupportedError(f"an array of {dtype}, a Numba type that is not a NumPy dtype",
                               f"{who()} makes an array of {dtype}, which has no NumPy dtype to simulate it "
                               f"with.") from None


def aligned_zeros(shape, dtype, alignment=None):
    """np.zeros(shape, dtype) whose first byte's address is a multiple of `alignment` (None: NumPy's own); a
    structured dtype gives a recarray."""
    if alignment is None:
        array = np.zeros(shape, dtype)
    else:
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        raw = np.zeros(nbytes + alignment, dtype=np.uint8)
        start = -raw.ctypes.data % alignment
        array = raw[start: start + nbytes].view(dtype).reshape(shape)
    return array.view(np.recarray) if dtype.names else array  # record fields by attribute, as in Numba


class MemorySpaces:
    """Mixin of Scheduler: needs shared, dynamic, static_shared_bytes, dynamic_bytes, memory, checked."""

    def shared_array(self, shape, dtype, frame, alignment=None):
        """The block's shared array for this call site (created by the first thread that gets here)."""
        key = (id(frame.f_code), frame.f_lasti)
        arr = self.shared.get(key)
        if arr is None:
            arr = self._new_shared(_normalize_shape(shape, "cuda.shared.array"), _as_dtype(dtype), frame, key,
                                   alignment)
            self.shared[key] = arr
        return arr

    def _new_shared(self, shape, dtype, frame, key, alignment):
        site = (id(frame.f_code), sites.instruction_start(frame.f_code, frame.f_lasti))
        for other_key, arr in self.shared.items():
            if other_key[0] == site[0] and sites.instruction_start(frame.f_code, other_key[1]) == site[1]:
                return arr
        name = name_from_line(linecache.getline(frame.f_code.co_filename, frame.f_lineno), "shared")
        if int(np.prod(shape)) == 0:
            if self.dynamic is None:
                self.dynamic = np.zeros(self.dynamic_bytes, dtype=np.uint8)
                if self.checked:
                    self.dynamic_region = self.memory.shared_region("dynamic", name, self.dynamic_bytes, True)
            count = self.dynamic_bytes // dtype.itemsize
            buffer = self.dynamic[: count * dtype.itemsize]
            if not self.checked:
                return buffer.view(dtype)
            return self.memory.shared_array(self.dynamic_region, buffer, dtype, (count,))
        nbytes = int(np.prod(shape)) * dtype.itemsize
        self.static_shared_bytes += nbytes
        if self.static_shared_bytes > STATIC_SHARED_LIMIT:
            raise ResourceError(
                f"{who()}: cuda.shared.array {name}{list(shape)} of {dtype} brings the block's static shared "
                f"memory to {self.static_shared_bytes} bytes, more than the {STATIC_SHARED_LIMIT} bytes "
                f"(48 KiB) a block may use.",
                "use smaller tiles, a smaller dtype, or fewer shared arrays.",
            )
        if self.static_shared_bytes + self.dynamic_bytes > self.shared_limit:
            raise ResourceError(
                f"{who()}: cuda.shared.array {name}{list(shape)} of {dtype} brings the block's shared memory "
                f"to {self.static_shared_bytes} static + {self.dynamic_bytes} dynamic bytes, more than the "
                f"{self.shared_limit} bytes the kernel may use.",
                "launch with fewer dynamic bytes, or use smaller static arrays.",
            )
        if not self.checked:
            return aligned_zeros(shape, dtype, alignment)
        buffer = np.zeros(nbytes, dtype=np.uint8)  # a region starts 2**30-aligned: any alignment= holds
        region = self.memory.shared_region(site, name, nbytes, False)
        return self.memory.shared_array(region, buffer, dtype, shape)

    def local_array(self, shape, dtype, alignment=None):
        shape = _normalize_shape(shape, "cuda.local.array")
        dtype = _as_dtype(dtype)
        if not self.checked:
            return aligned_zeros(shape, dtype, alignment)
        frame = sites.user_frame(3)
        name = (
            name_from_line(linecache.getline(frame.f_code.co_filename, frame.f_lineno), "local")
            if frame
            else "local"
        )
        values = aligned_zeros(shape, dtype, alignment)
        if dtype.kind in "fc":
            values.fill(np.nan)
        return BoundsCheckedArray(values, name, writable=True)

    def const_array(self, ary):
        """cuda.const.array_like: a read-only copy, counted as global reads like module-level arrays; one copy
        per host array and launch, shared by every thread, as constant memory is."""
        known = self.const_arrays.get(id(ary))
        if known is None or known[0] is not ary:
            known = self.const_arrays[id(ary)] = (ary, self._new_const_array(ary))
        return known[1]

    def _new_const_array(self, ary):
        data = ary.to_numpy() if isinstance(ary, DeviceArray) else np.array(getattr(ary, "_a", ary))
        if not self.checked:
            data.flags.writeable = False
            return data
        frame = sites.user_frame(4)
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno) if frame else ""
        name = name_from_line(line, "const")
        return self.memory.global_array(np.ascontiguousarray(data), name, readonly=True)
