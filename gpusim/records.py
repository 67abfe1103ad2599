"""Structured arrays in checked launches: an element is a record, taken by reference as Numba takes it
(`r = a[i]; r.x = 1` writes a[i]); its fields are read and written by attribute (`r.x`) or by name (`r['x']`),
and a field that is an array (`r.h[0]`) is a checked view of the record's bytes.

Every access is logged per field, at the field's own address: threads that write different fields of one
record do not race, as on a GPU. A field whose address is not a multiple of its size (a packed record) is
logged in bytes.
"""

import sys

import numpy as np

from .arrays import KIND_SHIFT, READ, SIZE_SHIFT, WRITE, DeviceArray
from .context import who
from .errors import KernelError, UnsupportedError
from .memory import c_strides
from .sites import TAG, user_frame

_getframe = sys._getframe


class Record:
    """One element of a structured array (or a record argument), by reference."""

    __slots__ = ("_array", "_e")

    def __init__(self, array, e):
        object.__setattr__(self, "_array", array)
        object.__setattr__(self, "_e", e)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._array.field(self._e, _field_name(self, name), READ, _getframe(1))

    def __setattr__(self, name, value):
        self._array.field(self._e, _field_name(self, name), WRITE, _getframe(1), value)

    def __getitem__(self, key):
        return self._array.field(self._e, _field_name(self, key), READ, _getframe(1))

    def __setitem__(self, key, value):
        self._array.field(self._e, _field_name(self, key), WRITE, _getframe(1), value)

    @property
    def dtype(self):
        return self._array.dtype

    def __repr__(self):
        return f"<gpusim record {self._array.region.name}[{self._e}]>"


def _field_name(record, key):
    names = record._array.dtype.names
    if isinstance(key, str) and key in names:
        return key
    if isinstance(key, (int, np.integer)) and -len(names) <= key < len(names):
        return names[key]
    raise KernelError(f"{who()} used field {key!r} of a record of {record._array.dtype}, which has fields "
                      f"{', '.join(names)}.", "use one of the record's field names.")


class RecordArray(DeviceArray):
    """A checked structured array: elements are Records, accesses are logged per field; `a.x` and `a['x']`
    are checked views of field x of every element."""

    __slots__ = ()

    def __getattr__(self, name):
        if not name.startswith("__") and name in (self.dtype.names or ()):
            return self.field_view(name)
        return super().__getattr__(name)

    def __getitem__(self, idx):
        if isinstance(idx, str):
            return self.field_view(idx)
        return self._access(idx, _getframe(1), READ)

    def field_view(self, name):
        """A view of field `name` across the array (its own axes follow, for an array field)."""
        from .arrayviews import retyped

        _field_name(Record(self, 0), name)  # a KernelError for a name the records do not have
        dtype, offset = self.dtype.fields[name][:2]
        base, shape = dtype.subdtype if dtype.subdtype is not None else (dtype, ())
        size, record_size = base.itemsize, self.dtype.itemsize
        if record_size % size or offset % size or self._b0 % size:
            raise UnsupportedError("a field of a packed record array, viewed across the array",
                                   f"{who()} views field {name} of {self.region.name}, whose records do not "
                                   f"place it at a multiple of its size.")
        ratio = record_size // size
        raw = self._flat.view(np.uint8)
        flat = raw[: len(raw) // size * size].view(base)
        strides = [stride * ratio for stride in self._st] + list(c_strides(shape))
        return retyped(self, flat, self._b0 // size, self.shape + tuple(shape), strides,
                       self._e0 * ratio + offset // size)

    def _view(self, shape, strides, e0):
        arr = RecordArray.__new__(RecordArray)
        for slot in ("_flat", "_kb", "_mr", "_mw", "_la", "region", "dtype", "_vals", "_b0"):
            setattr(arr, slot, getattr(self, slot))
        arr.shape, arr._st, arr._e0 = tuple(shape), tuple(strides), e0
        arr.ndim = len(arr.shape)
        arr.size = int(np.prod(arr.shape, dtype=np.int64))
        return arr

    def _element(self, e, frame, kind, value):
        if kind == READ:
            return Record(self, e)
        for name in self.dtype.names:  # a whole record assigned: field by field
            self.field(e, name, WRITE, frame, _source_field(value, name, frame))
        return None

    def atomic(self, idx, op, frame, *operands):
        raise UnsupportedError("an atomic on a record", f"{who()} applies an atomic to a whole record of "
                               f"{self.region.name}; Numba's atomics take arrays of numbers.")

    def field(self, e, name, kind, frame, value=None):
        """Read or write one field of element e, logged at the field's address; an array field gives a
        view."""
        if kind != READ and self.region.readonly:
            raise self._readonly(e, kind, frame)
        dtype, offset = self.dtype.fields[name][:2]
        address = self._b0 + e * self.dtype.itemsize + offset
        if dtype.subdtype is not None:
            view = self._array_field(address, dtype)
            if kind == READ:
                return view
            for index in np.ndindex(view.shape):  # an array assigned to an array field: element by element
                view._access(index, frame, WRITE, np.asarray(value)[index])
            return None
        self._log_field(address, dtype.itemsize, frame, kind)
        column = self._flat[name]
        if kind == READ:
            return column[e]
        column[e] = value
        return None

    def _log_field(self, address, size, frame, kind):
        tag = frame.f_globals.get(TAG)
        if tag is None:
            frame = user_frame(1) or frame
            tag = frame.f_globals.get(TAG, 0)
        if size & (size - 1) == 0 and address % size == 0:
            key, code = address // size, size.bit_length() - 1
        else:
            key, code = address, 0
        self._la(key)
        self._la((code << SIZE_SHIFT) + (kind << KIND_SHIFT) + tag + frame.f_lasti)

    def _array_field(self, address, dtype):
        """A checked view of an array field (`r.h`) at byte `address`."""
        from .arrayviews import retyped

        base, shape = dtype.subdtype
        size = base.itemsize
        if address % size or (self._b0 % size):
            raise UnsupportedError("an array field of a packed record",
                                   f"{who()} uses an array field that is not aligned to its items.")
        raw = self._flat.view(np.uint8)
        flat = raw[: len(raw) // size * size].view(base)
        e0 = (address - self._b0) // size
        return retyped(self, flat, self._b0 // size, shape, c_strides(shape), e0)


def _source_field(value, name, frame):
    """Field `name` of a record being copied: another Record (its field read and logged) or a NumPy record."""
    if isinstance(value, Record):
        return value._array.field(value._e, name, READ, frame)
    if isinstance(value, np.void):
        return value[name]
    raise KernelError(f"{who()} assigned {type(value).__name__} to a record.",
                      "assign a record from another record of the same type, or set its fields one by one.")
