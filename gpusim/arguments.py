"""A kernel's arguments as gpusim passes them, typed as Numba types them.

Arrays (NumPy arrays, CPU torch tensors, Numba device arrays) become checked views of global memory (plain
NumPy arrays in unchecked launches). A scalar becomes the NumPy scalar of its Numba type: the type the
kernel's signature declares for it, else int64 for a Python int and float64 for a float (so `x / 0.0` is inf,
as on a GPU). An array passed as cuda.In(a) is copied first: the kernel's writes do not come back. Tuples are
converted element by element; a record (one element of a structured array) becomes a record of a one-element
array that is copied back after the launch; enum members pass as they are.
"""

import enum
import numbers

import numpy as np

from . import frontends
from .arrays import READ_ONLY_ARGUMENT
from .errors import ArgumentTypeError, ResourceError
from .numeric import cast, numba_scalar
from .records import Record


def host_array(value):
    """The NumPy array behind an array argument (a torch tensor's, a device array's), else None."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.startswith("torch") and hasattr(value, "numpy"):
        if value.device.type != "cpu":
            raise ResourceError(f"a torch tensor on {value.device} cannot be simulated; pass a CPU tensor.")
        return value.detach().resolve_conj().resolve_neg().numpy()
    host = getattr(value, "_ary", None)
    if isinstance(host, np.ndarray):
        return host
    return None


def _hinted(value):
    """(array, whether the kernel's writes reach it) for numba's cuda.In / cuda.Out / cuda.InOut, else None:
    an array passed with cuda.In is copied to the GPU and not back."""
    name = type(value).__name__
    if name in ("In", "Out", "InOut") and frontends.from_front_end(type(value)):
        array = host_array(getattr(value, "value", None))
        if array is not None:
            return array, name != "In"
    return None


def host_arrays(args):
    """Every array among the arguments, tuples and records included: what a launch may write."""
    found = []
    for value in args:
        array = host_array(value)
        hinted = _hinted(value)
        if array is not None:
            found.append(array)
        elif hinted is not None:
            found.append(hinted[0])
        elif isinstance(value, tuple):
            found.extend(host_arrays(value))
    return found


def apply_extensions(kernel, args):
    """The arguments after the kernel's numba-cuda extensions have prepared them (`kernel.extensions`: each
    `prepare_args(type, value, stream=0, retr=[])` may wrap a value, e.g. in cuda.In), as the simulator
    does."""
    extensions = getattr(kernel, "extensions", None) or ()
    prepared = []
    for value in args:
        kind = None
        for extension in extensions:
            kind, value = extension.prepare_args(kind, value, stream=0, retr=[])
        prepared.append(value)
    return prepared


def declared_types(kernel):
    """The argument types of the signature a kernel was compiled for when it declares one (`@cuda.jit("void(
    float32[:], int32)")`), else None."""
    if getattr(kernel, "_can_compile", True):
        return None
    signatures = getattr(kernel, "signatures", None) or ()
    return tuple(signatures[0]) if len(signatures) == 1 else None


def declared_return_type(kernel):
    """The return type of a device function's declared signature (`@cuda.jit("int32(int32)",
    device=True)`), else None."""
    if getattr(kernel, "_can_compile", True):
        return None
    signatures = getattr(kernel, "nopython_signatures", None) or ()
    return signatures[0].return_type if len(signatures) == 1 else None


def typed_device_function(dispatcher, function):
    """`function` (the rebound device function of `dispatcher`), converting its arguments and its result to
    the types a declared signature gives them, as numba-cuda casts them at the call."""
    argtypes = declared_types(dispatcher)
    if argtypes is None:
        return function
    dtypes = [_scalar_dtype(t) for t in argtypes]
    result_dtype = _scalar_dtype(declared_return_type(dispatcher))
    if result_dtype is None and not any(d is not None for d in dtypes):
        return function

    def call(*args):
        args = [cast(a, d) if d is not None and isinstance(a, (numbers.Number, np.generic)) else a
                for a, d in zip(args, dtypes, strict=False)]
        result = function(*args)
        return cast(result, result_dtype) if result_dtype is not None and result is not None else result

    call.__name__ = call.__qualname__ = function.__name__
    return call


def _narrowing(value, dtype):
    """Would numba-cuda's dispatcher refuse to convert `value` to `dtype` (a complex number to a real type, a
    float to an integer)?"""
    kind = np.asarray(value).dtype.kind
    return (kind == "c" and dtype.kind != "c") or (kind == "f" and dtype.kind in "iub")


def _scalar_dtype(numba_type):
    """The NumPy dtype of a Numba scalar type, or None for any other type."""
    if type(numba_type).__name__ not in ("Integer", "Float", "Boolean", "Complex"):
        return None
    try:
        return np.dtype(str(numba_type))
    except TypeError:
        return None


class _Converter:
    def __init__(self, memory, checked):
        self.memory = memory
        self.checked = checked
        self.copy_backs = []

    def convert(self, name, value, declared):
        array = host_array(value)
        if array is not None:
            return self._array(name, array)
        hinted = _hinted(value)
        if hinted is not None:
            array, copied_back = hinted
            return self._array(name, array if copied_back else array.copy())
        if isinstance(value, np.void):
            return self._record(name, value)
        if isinstance(value, (numbers.Number, np.generic)):
            dtype = _scalar_dtype(declared)
            if dtype is None:
                return numba_scalar(value)
            if _narrowing(numba_scalar(value), dtype):
                raise ArgumentTypeError(f"argument {name} is {value!r}, which numba-cuda does not convert to "
                                        f"the {dtype} the kernel's signature declares.")
            return cast(value, dtype)
        if isinstance(value, tuple):
            parts = getattr(declared, "types", ())
            converted = [self.convert(f"{name}[{i}]", part, parts[i] if i < len(parts) else None)
                         for i, part in enumerate(value)]
            return type(value)(*converted) if hasattr(value, "_fields") else tuple(converted)
        if isinstance(value, enum.Enum):
            return value
        raise ResourceError(
            f"argument {name} has type {type(value).__name__}, which a kernel cannot take.",
            "pass NumPy arrays, CPU torch tensors, Numba device arrays, numbers, or tuples, records and enum "
            "members as Numba takes them.",
        )

    def _array(self, name, array):
        if array.dtype.hasobject:
            raise ResourceError(f"argument {name} is an array of Python objects; use a numeric dtype.")
        if not self.checked:
            return array.view(np.recarray) if array.dtype.names else array  # fields by attribute, as in Numba
        # Numba types an array whose writeable flag is off as a readonly array, and refuses to compile a write
        readonly = READ_ONLY_ARGUMENT if not array.flags.writeable else False
        if not array.flags.c_contiguous:
            copy = np.ascontiguousarray(array)
            if not readonly:
                self.copy_backs.append((array, copy))
            array = copy
        return self.memory.global_array(array, name, readonly=readonly)

    def _record(self, name, record):
        """One record: the kernel sees element 0 of a one-element copy, which is copied back after the launch
        (as Numba copies a record argument to the GPU and back)."""
        holder = np.array([record], dtype=record.dtype)
        self.copy_backs.append((_RecordTarget(record), holder))
        array = self._array(name, holder)
        return array.view(np.recarray)[0] if isinstance(array, np.ndarray) else Record(array, 0)


class _RecordTarget:
    """Where a record argument's one-element copy goes back to (np.copyto-like)."""

    def __init__(self, record):
        self.record = record

    def copy_from(self, holder):
        for field in self.record.dtype.names or ():
            self.record[field] = holder[0][field]


def copy_back(copy_backs):
    """Write the launch's copies back into the caller's arrays and records."""
    for original, copy in copy_backs:
        if isinstance(original, _RecordTarget):
            original.copy_from(copy)
        else:
            np.copyto(original, copy)


def convert_args(fn, args, memory, checked, declared=None):
    """The arguments the kernel gets, and (original, copy) pairs to copy back after the launch
    (`copy_back`)."""
    code = fn.__code__
    names = code.co_varnames[: code.co_argcount]
    if len(args) != len(names):
        raise ResourceError(
            f"{fn.__name__} takes {len(names)} arguments ({', '.join(names)}), got {len(args)}."
        )
    converter = _Converter(memory, checked)
    declared = declared if declared is not None and len(declared) == len(args) else (None,) * len(args)
    sim_args = [converter.convert(name, value, kind) for name, value, kind in zip(names, args, declared,
                                                                                 strict=True)]
    return sim_args, converter.copy_backs
