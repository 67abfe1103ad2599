"""Rebind an unchanged Numba kernel so that its `cuda` (module or members imported by name), `numba`, device
functions and scalar types resolve to gpusim's simulated versions, whichever front end it was written
for (gpusim.frontends)."""

import dis
import functools
import types

import numpy as np

from . import frontends, libdevice, sites
from .arguments import typed_device_function
from .arrays import TAG_SHIFT
from .fakecuda import MEMBER_NAMES
from .frozen import frozen
from .gpumath import BUILTINS, gpu_function, math_module
from .linked import cffi_stand_in, model_for
from .overloads import Overloaded, overload_templates

MAX_FUNCTIONS = 255

_SCALAR_TYPE_CLASSES = {"Integer", "Float", "Boolean", "Complex"}


def python_function(kernel):
    """The Python function behind a Numba dispatcher, a simulator kernel or a plain function."""
    if isinstance(kernel, types.FunctionType):
        return kernel
    for attr in ("py_func", "fn"):
        fn = getattr(kernel, attr, None)
        if isinstance(fn, types.FunctionType):
            return fn
    raise TypeError(
        f"gpusim.jit expects a @cuda.jit kernel or a Python function, not {type(kernel).__name__}"
    )


def numpy_scalar_type(value):
    """np.float32 for numba.float32 and friends; None for anything else."""
    cls = type(value)
    if cls.__name__ in _SCALAR_TYPE_CLASSES and frontends.from_front_end(cls):
        try:
            return np.dtype(str(value)).type
        except TypeError:
            return None
    return None


def _device_array(value):
    """The NumPy array behind a front end's device array (cuda.to_device gives one), else None."""
    host = getattr(value, "_ary", None) if frontends.from_front_end(type(value)) else None
    return host if isinstance(host, np.ndarray) and host.flags.c_contiguous else None


def _is_dispatcher(value):
    py_func = getattr(value, "py_func", None)
    return isinstance(py_func, types.FunctionType) and frontends.from_front_end(type(value))


@functools.lru_cache(maxsize=1024)
def _names_used(code):
    """The global names a code object (and the code nested in it) loads (cached: every launch asks)."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_used(const)
    return frozenset(names)


class _Namespace:
    """A stand-in for the `numba` module or `numba.types` (or another front end's): scalar types become numpy
    casts."""

    def __init__(self, real, translate):
        self._real = real
        self._translate = translate

    def __getattr__(self, name):
        value = self._translate(getattr(self._real, name))
        setattr(self, name, value)
        return value


class Rebinder:
    """Translates the objects a kernel refers to, one launch at a time.

    Each rebound function gets its own globals, tagged with its index in `codes`. NumPy arrays the code reads
    from its globals or closure become `constant(array, name)` (read-only, as Numba freezes them); with a
    `store` (gpusim.frozen), numbers and arrays keep the values of the compilation's first launch.
    """

    def __init__(self, fake_cuda, codes, constant=None, store=None):
        self.fake_cuda = fake_cuda
        self.codes = codes
        self.constant = constant
        self.store = store  # gpusim.frozen: the values the kernel's compilation froze (None: read them live)
        self._done = {}
        self._namespaces = {}
        self._constants = {}

    def function(self, fn):
        """A copy of `fn` whose globals and closure refer to simulated objects."""
        done = self._done.get(fn)
        if done is not None:
            return done
        # Empty cells first, filled once the copy is known: a device function that calls itself through its
        # closure (defined in a factory) then finds its own copy.
        cells = tuple(types.CellType() for _ in fn.__closure__) if fn.__closure__ else None
        new_globals = dict(fn.__globals__)
        if len(self.codes) >= MAX_FUNCTIONS:
            raise TypeError(f"a kernel may call at most {MAX_FUNCTIONS} different functions in gpusim")
        new_globals[sites.TAG] = len(self.codes) << TAG_SHIFT
        self.codes.append(fn.__code__)
        new_fn = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__, cells)
        new_fn.__kwdefaults__ = fn.__kwdefaults__
        self._done[fn] = new_fn
        names = fn.__code__.co_freevars
        for new_cell, cell, name in zip(cells or (), fn.__closure__ or (), names, strict=True):
            try:
                contents = cell.cell_contents
            except ValueError:  # a cell not filled yet stays empty
                continue
            value = frozen(self.store, fn.__code__, name, contents)
            new_cell.cell_contents = self.value(value, fn.__globals__, name)
        for name in _names_used(fn.__code__):
            if name not in new_globals and name in BUILTINS:
                new_globals[name] = BUILTINS[name]
            elif name in new_globals:
                value = frozen(self.store, fn.__code__, name, new_globals[name])
                new_globals[name] = self.value(value, fn.__globals__, name)
        return new_fn

    def functions(self):
        """Every function rebound so far (the kernel and the device functions it can call)."""
        return list(self._done.values())

    def value(self, value, home_globals, name=None):
        """The simulated counterpart of one object a kernel refers to (often the object itself)."""
        if isinstance(value, types.ModuleType):
            return self._module(value)
        if isinstance(value, np.ndarray) and self.constant is not None and value.dtype.kind in "biufc":
            frozen = self._constants.get(id(value))
            if frozen is None:
                frozen = self._constants[id(value)] = (value, self.constant(value, name or "constant"))
            return frozen[1]
        device = _device_array(value) if self.constant is not None else None
        if device is not None:  # captured by reference, as Numba captures a device array's pointer
            known = self._constants.get(id(value))
            if known is None:
                captured = self.constant(device, name or "array", device=True)
                known = self._constants[id(value)] = (value, captured)
            return known[1]
        member = frontends.cuda_member(value, MEMBER_NAMES)
        if member is not None:
            return self.fake_cuda.member(member)
        templates = overload_templates(value)
        if templates:
            return Overloaded(value, templates, self.function)
        if _is_dispatcher(value):
            return typed_device_function(value, self.function(value.py_func))
        if isinstance(value, types.FunctionType) and value.__globals__ is home_globals:
            return self.function(value)
        scalar = numpy_scalar_type(value)
        if scalar is not None:
            return scalar
        return (gpu_function(value) or model_for(value) or cffi_stand_in(value) or libdevice.stand_in(value)
                or value)

    def _module(self, module):
        name = module.__name__
        part = frontends.cuda_part(name)
        if part == "":
            return self.fake_cuda
        if part in MEMBER_NAMES:
            return self.fake_cuda.member(part)
        if name == "math":
            return math_module
        if frontends.is_namespace(name):
            namespace = self._namespaces.get(name)
            if namespace is None:
                namespace = _Namespace(module, self._namespace_value)
                self._namespaces[name] = namespace
            return namespace
        return module

    def _namespace_value(self, value):
        if isinstance(value, types.ModuleType):
            return self._module(value)
        scalar = numpy_scalar_type(value)
        return value if scalar is None else scalar
