"""Functions overloaded with numba-cuda's `@overload` (numba.cuda.extending): a kernel that calls one runs the
implementation the overload returns for the Numba types of the call's arguments, as a device function.

An overload for target "cuda" is preferred to a "generic" one, as numba-cuda prefers it. The typing
functions are numba-cuda's own and see Numba types (`types.Array(int32, 1, "C")`); their implementations are
rebound like any device function. Nothing here imports numba: the registry is read only where numba-cuda is
imported.
"""

import numbers
import sys
import types

import numpy as np

from .context import who
from .errors import KernelError

_REGISTRY = "numba.cuda.typing.templates"
_TARGET_ORDER = {"cuda": 0, "gpu": 0, "generic": 1}
_index = {"size": -1, "templates": {}}


def overload_templates(function):
    """numba-cuda's overload templates registered for the Python function `function` (not NumPy's, which
    gpusim runs itself), best target first; none: empty."""
    module = sys.modules.get(_REGISTRY)
    if module is None or not isinstance(function, types.FunctionType) or \
            (function.__module__ or "").partition(".")[0] == "numpy":
        return []
    entries = module.builtin_registry.globals
    if len(entries) != _index["size"]:
        templates = {}
        for value, kind in entries:
            for template in getattr(kind, "templates", ()):
                if hasattr(template, "_overload_func"):
                    templates.setdefault(id(value), []).append((value, template))
        _index.update(size=len(entries), templates=templates)
    found = [t for value, t in _index["templates"].get(id(function), ()) if value is function]
    return sorted(found, key=lambda t: _TARGET_ORDER.get(t.metadata.get("target"), 2))


def numba_type(value):
    """The Numba type numba-cuda gives a kernel's value (a checked array, a scalar, a tuple, ...)."""
    from numba.cuda import types as nb
    from numba.cuda.np.numpy_support import from_dtype
    from numba.cuda.typing.typeof import typeof

    from .arrays import BoundsCheckedArray, DeviceArray
    from .memory import c_strides
    from .records import Record

    if isinstance(value, DeviceArray):
        layout = "C" if value._st == c_strides(value.shape) else "A"
        return nb.Array(from_dtype(value.dtype), value.ndim, layout)
    if isinstance(value, BoundsCheckedArray):
        return typeof(value._a)
    if isinstance(value, Record):
        return from_dtype(value.dtype)
    if isinstance(value, bool):
        return nb.boolean
    if isinstance(value, numbers.Integral) and not isinstance(value, np.generic):
        return nb.int64
    if isinstance(value, float):
        return nb.float64
    if isinstance(value, tuple):
        return nb.BaseTuple.from_types([numba_type(v) for v in value])
    if isinstance(value, types.FunctionType):  # a function passed on, as Numba types a closure
        return nb.MakeFunctionLiteral(value)
    return typeof(value)


class Overloaded:
    """What a kernel calls in place of an overloaded function: the overload's implementation for the types
    of each call, rebound (once per combination of types) by `rebind`."""

    def __init__(self, function, templates, rebind):
        self.function = function
        self.templates = templates
        self.rebind = rebind
        self.implementations = {}

    def __call__(self, *args, **kwargs):
        key = (tuple(map(numba_type, args)), tuple(sorted((k, numba_type(v)) for k, v in kwargs.items())))
        implementation = self.implementations.get(key)
        if implementation is None:
            implementation = self.implementations[key] = self.rebind(self._implementation(*key))
        return implementation(*args, **kwargs)

    def _implementation(self, arg_types, kw_types):
        for template in self.templates:
            made = template._overload_func(*arg_types, **dict(kw_types))
            if made is not None:
                return made[1] if isinstance(made, tuple) else made
        types = ", ".join(map(str, arg_types))
        raise KernelError(f"{who()} calls {self.function.__name__}({types}): no @overload of it gives an "
                          f"implementation for these types.",
                          "Numba's compiler would reject this call; check the argument types.")
