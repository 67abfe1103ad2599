"""Globals and closure variables frozen as Numba freezes them: when it compiles a kernel for a set of argument
types, the numbers, tuples, enum members and NumPy arrays the kernel and its device functions read from their
globals and closures become constants of the compiled code. A GPU then keeps the values of the first launch
with those argument types, however the Python variables change afterwards; so does gpusim.

`snapshot(kernel, function, args)` gives the store of one such compilation: a dict that the first launch fills
((code, name) -> value, arrays copied) and later launches read.
"""

import enum
import numbers
import weakref

import numpy as np

from .arguments import host_array

_compilations = weakref.WeakKeyDictionary()  # dispatcher -> {argument types: {(code, name): value}}


def _type_of(value):
    """What Numba compiles a specialisation for: an array's dtype, dimensions and layout; a scalar's type."""
    array = host_array(value)
    if array is not None:
        layout = "C" if array.flags.c_contiguous else "F" if array.flags.f_contiguous else "A"
        return ("array", array.dtype, array.ndim, layout)
    if isinstance(value, tuple):
        return ("tuple", *map(_type_of, value))
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, np.generic):
        return np.dtype(type(value)).str
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real):
        return "float"
    return type(value).__qualname__


def snapshot(kernel, function, args):
    """The store of frozen values for `kernel` (a dispatcher, which compiles for itself: a new `cuda.jit` of
    the same Python function compiles anew) compiled for the types of `args`; where `kernel` cannot be
    referenced weakly, its Python `function`'s."""
    try:
        weakref.ref(kernel)
    except TypeError:
        kernel = function
    per_types = _compilations.setdefault(kernel, {})
    return per_types.setdefault(tuple(map(_type_of, args)), {})


def is_constant(value):
    """Does Numba freeze this value into the compiled code (rather than resolve an object by reference)?"""
    if isinstance(value, (numbers.Number, np.generic, str, bytes, enum.Enum)) or value is None:
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc"
    if isinstance(value, tuple):
        return all(map(is_constant, value))
    return False


def frozen(store, code, name, value):
    """`value` as the compilation that `store` stands for froze it (its first launch freezes it now)."""
    if store is None or not is_constant(value):
        return value
    key = (code, name)
    if key not in store:
        store[key] = value.copy() if isinstance(value, np.ndarray) else value
    return store[key]
