"""A kernel as plain JSON data, and back.

``describe(kernel)`` (in the learner's process) turns a ``@cuda.jit`` kernel into a spec: the text of its
``def``, where that text lives, and the values of the globals and closure variables it uses, encoded as plain
data. ``rebuild(spec)`` (in any process, the trusted grader's included) checks the spec with ``validate`` and
makes a new function from it. Rebuilding runs no learner code: the source is compiled (decorators, default
values and annotations stripped first) and the function is made from the compiled code object; nothing is
executed, not even the ``def`` statement. Running the rebuilt kernel is another matter: do that only after
Numba's CUDA compiler has accepted it (:mod:`course.compilegate`), since a kernel that compiles cannot
touch Python objects.

A spec, for the kernel and for each device function it calls::

    {"version": 1, "id": 0, "jit": true, "name": "dot", "filename": "<cell 7>", "firstline": 3,
     "source": "def dot(a, b, out):\\n    ...", "globals": {"T": {"int": 16}}, "closure": {},
     "defaults": null}

Values are one-key objects: ``none``, ``bool``, ``int``, ``float`` (``float.hex`` text, so NaN and
infinities survive strict JSON), ``complex`` (two of those), ``scalar`` and ``array`` (NumPy dtype and
base64 bytes), ``tuple``, ``module`` (one of ``MODULES``), ``attribute`` ([module, name], e.g.
``from numba import float32``), ``function`` (a nested spec) and ``function_ref`` (the id of a function
described elsewhere in the same spec, for recursion and functions used twice).
"""

from __future__ import annotations

import ast
import base64
import builtins
import dis
import importlib
import json
import keyword
import linecache
import math
import os
import sys
import sysconfig
import types

import numpy as np

from gpusim import KernelError, is_cuda_stand_in, python_function

VERSION = 1
MODULES = {  # name in a spec -> module to import
    "math": "math",
    "cmath": "cmath",
    "numpy": "numpy",
    "numba": "numba",
    "numba.cuda": "numba.cuda",
    "numba.types": "numba.core.types",
}
_SPEC_NAME_OF_MODULE = {"numba.core.types": "numba.types", **{name: name for name in MODULES}}

MAX_ARRAY_BYTES = 16 * 2**20  # one module-level array
MAX_TOTAL_ARRAY_BYTES = 64 * 2**20
MAX_SOURCE_CHARS = 100_000
MAX_FUNCTIONS = 64
MAX_NAMES = 256  # globals and closure variables of one function
MAX_TUPLE = 1024
MAX_DEPTH = 24  # nesting of functions and tuples
MAX_NAME_CHARS = 200
MAX_FILENAME_CHARS = 1000
MAX_LINE = 10**6
MAX_NDIM = 8
MAX_DEFAULTS = 64
NUMERIC_KINDS = "biufc"
_SPEC_KEYS = {"version", "id", "jit", "name", "filename", "firstline", "source", "globals", "closure",
              "defaults"}
_VALUE_TAGS = {"none", "bool", "int", "float", "complex", "scalar", "array", "tuple", "module", "attribute",
               "function", "function_ref"}
_GLOBAL_OPS = {"LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME", "STORE_NAME", "DELETE_NAME"}
_LIBRARY_DIRS = tuple({os.path.realpath(sysconfig.get_paths()[key]) + os.sep
                       for key in ("stdlib", "platstdlib", "purelib", "platlib")})
_ALLOWED = ("a GPU kernel can only use numbers, tuples, NumPy arrays, the math, numpy and cuda modules and "
            "other @cuda.jit functions: pass other data to the kernel as arguments.")


class KernelSourceError(KernelError):
    """A kernel that cannot be described as plain data, or a spec that is not a valid description."""

    hint = _ALLOWED


# --------------------------------------------------------------------------------------------- describe


def describe(kernel) -> dict:
    """The spec of a kernel (a Numba dispatcher, a simulator kernel or a plain function): JSON-ready data."""
    try:
        fn = python_function(kernel)
    except TypeError as error:
        raise KernelSourceError(f"{error}.", "pass the kernel itself: the function decorated with @cuda.jit."
                                ) from None
    return _Describer().function(fn, jit=_jitted(kernel) is not None, role="kernel")


def _jitted(value):
    """The Python function behind a Numba dispatcher (real or simulator), or None."""
    module = type(value).__module__ or ""
    fn = getattr(value, "py_func", None) if module.startswith("numba") else None
    return fn if isinstance(fn, types.FunctionType) else None


def _is_library_code(fn) -> bool:
    return os.path.realpath(fn.__code__.co_filename).startswith(_LIBRARY_DIRS)


def global_names(code) -> set[str]:
    """Names that `code` (and the functions defined in it) look up as globals."""
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in _GLOBAL_OPS}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= global_names(const)
    return names


def source_of(fn) -> tuple[str, int, str]:
    """(filename, line of the `def`, text of the def without decorators, dedented) from linecache."""
    code = fn.__code__
    where = f"`{code.co_name}`"
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    if not lines:
        raise KernelSourceError(
            f"the source text of {where} ({code.co_filename}) cannot be found.",
            "define kernels in a notebook cell or a .py file, not with exec() or in an interactive prompt.")
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise KernelSourceError(f"the file that defines {where} ({code.co_filename}) cannot be parsed.",
                                "run the cell that defines the kernel again.") from None
    for node in ast.walk(tree):
        if (isinstance(node, ast.FunctionDef) and node.name == code.co_name
                and min([node.lineno] + [d.lineno for d in node.decorator_list]) == code.co_firstlineno):
            block = lines[node.lineno - 1:node.end_lineno]
            indent = block[0][:len(block[0]) - len(block[0].lstrip())]
            text = "".join(line[len(indent):] if line.startswith(indent) else line for line in block)
            if not _same_code(code, text, code.co_filename, node.lineno):
                break
            return code.co_filename, node.lineno, text
    raise KernelSourceError(
        f"the source text of {where} does not match the function any more.",
        "run the cell that defines it again (and the cells after it); define kernels with `def`, not lambda.")


def _same_code(code, text, filename, firstline) -> bool:
    try:
        rebuilt = _function_code(text, filename, firstline, code.co_name)
    except (SyntaxError, ValueError, RecursionError, MemoryError, StopIteration):
        return False
    return rebuilt.co_argcount == code.co_argcount and rebuilt.co_varnames == code.co_varnames


class _Describer:
    """Describes one kernel and, recursively, the device functions it calls."""

    def __init__(self):
        self.ids = {}
        self.array_bytes = 0

    def function(self, fn, jit, role):
        self.ids[fn] = len(self.ids)
        if len(self.ids) > MAX_FUNCTIONS:
            raise KernelSourceError(f"the kernel calls more than {MAX_FUNCTIONS} functions.",
                                    "call fewer device functions.")
        filename, firstline, source = source_of(fn)
        code = fn.__code__
        owner = f"{role} `{code.co_name}`"
        if fn.__kwdefaults__:
            raise KernelSourceError(f"{owner} has keyword-only arguments with defaults.",
                                    "give kernels and device functions plain positional arguments.")
        used = global_names(code)
        globals_ = {name: self.value(fn.__globals__[name], owner, name, 1)
                    for name in sorted(used) if name in fn.__globals__}
        closure = {}
        for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
            try:
                contents = cell.cell_contents
            except ValueError:
                raise KernelSourceError(f"{owner} uses `{name}` before it has a value.",
                                        "give the variable a value before the kernel is defined.") from None
            closure[name] = self.value(contents, owner, name, 1)
        defaults = None
        if fn.__defaults__ is not None:
            defaults = [self.value(v, owner, "a default argument value", 1) for v in fn.__defaults__]
        return {"version": VERSION, "id": self.ids[fn], "jit": jit, "name": code.co_name,
                "filename": filename, "firstline": firstline, "source": source, "globals": globals_,
                "closure": closure, "defaults": defaults}

    def value(self, value, owner, name, depth):
        """The plain-data form of one value a function uses; KernelSourceError names what is wrong."""
        if depth > MAX_DEPTH:
            raise KernelSourceError(f"{owner} uses `{name}`, nested too deeply.")
        if isinstance(value, np.generic) and value.dtype.kind in NUMERIC_KINDS:  # np.float64 too
            return {"scalar": _encode_bytes(np.asarray(value))}
        if value is None or isinstance(value, (bool, int, float, complex)):
            return _number(value, owner, name)
        if isinstance(value, np.ndarray):
            return self._array(value, owner, name)
        if isinstance(value, tuple):
            if len(value) > MAX_TUPLE:
                raise KernelSourceError(f"{owner} uses `{name}`, a tuple of more than {MAX_TUPLE} items.",
                                        "pass large data to the kernel as an array argument.")
            return {"tuple": [self.value(item, owner, name, depth + 1) for item in value]}
        if isinstance(value, types.ModuleType):
            spec_name = _SPEC_NAME_OF_MODULE.get(value.__name__)
            if spec_name is None:
                raise KernelSourceError(
                    f"{owner} uses the module `{value.__name__}` (as `{name}`).",
                    "a kernel can use the modules math, cmath, numpy, numba and cuda; copy a value it needs "
                    f"from another module into a global variable first (`X = {name}.X`).")
            return {"module": spec_name}
        if is_cuda_stand_in(value):
            return {"module": "numba.cuda"}
        attribute = _module_attribute(value)
        if attribute is not None:
            return {"attribute": list(attribute)}
        fn = _jitted(value)
        if fn is not None or isinstance(value, types.FunctionType):
            return self._device_function(fn or value, fn is not None, owner, name)
        raise KernelSourceError(f"{owner} uses `{name}`, {_what(value)}, which a GPU kernel cannot use.")

    def _array(self, array, owner, name):
        if array.dtype.kind not in NUMERIC_KINDS or array.dtype.fields is not None:
            raise KernelSourceError(f"{owner} uses `{name}`, an array of {array.dtype}, not of numbers.")
        if array.nbytes > MAX_ARRAY_BYTES or array.ndim > MAX_NDIM:
            raise KernelSourceError(
                f"{owner} uses `{name}`, a module-level array of {array.nbytes / 2**20:.1f} MiB; one used "
                f"inside a kernel may hold at most {MAX_ARRAY_BYTES // 2**20} MiB.",
                "pass large arrays to the kernel as arguments.")
        self.array_bytes += array.nbytes
        if self.array_bytes > MAX_TOTAL_ARRAY_BYTES:
            raise KernelSourceError(
                f"the module-level arrays that {owner} uses hold more than "
                f"{MAX_TOTAL_ARRAY_BYTES // 2**20} MiB.", "pass large arrays to the kernel as arguments.")
        return {"array": {**_encode_bytes(array), "shape": list(array.shape)}}

    def _device_function(self, fn, jit, owner, name):
        if fn in self.ids:
            return {"function_ref": self.ids[fn]}
        if _is_library_code(fn):
            module = getattr(fn, "__module__", None) or "a library"
            raise KernelSourceError(
                f"{owner} uses `{name}`, a Python function from {module}, which a GPU kernel cannot call.",
                "call functions through their module (`math.exp`, `np.sqrt`): Numba compiles those it "
                "supports; other work belongs outside the kernel or in a @cuda.jit(device=True) function.")
        return {"function": self.function(fn, jit, "device function")}


def _number(value, owner, name):
    if value is None:
        return {"none": None}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        if not -2**63 <= value < 2**64:
            raise KernelSourceError(f"{owner} uses `{name}` = {value}, too large for a 64-bit integer.")
        return {"int": value}
    if isinstance(value, float):
        return {"float": value.hex()}
    return {"complex": [value.real.hex(), value.imag.hex()]}


def _encode_bytes(array) -> dict:
    array = np.ascontiguousarray(array)
    return {"dtype": array.dtype.str, "data": base64.b64encode(array.tobytes()).decode("ascii")}


def _module_attribute(value):
    """(module, name) when `value` is a public attribute of an allowed module (`numba.float32`), else None."""
    for spec_name, module_name in MODULES.items():
        module = sys.modules.get(module_name)
        for name, item in list(vars(module).items()) if module is not None else ():
            if item is value and not name.startswith("_") and not isinstance(item, types.ModuleType):
                return spec_name, name
    return None


def _what(value) -> str:
    known = {list: "a list", dict: "a dict", set: "a set", str: "a string", bytes: "a bytes object"}
    if type(value) in known:
        return known[type(value)]
    kind = type(value).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind} ({type(value).__module__}.{kind})"


# ---------------------------------------------------------------------------------------------- validate


def validate(spec) -> None:
    """Check that `spec` is a kernel description as `describe` writes it; KernelSourceError otherwise.

    Safe on hostile data: sizes, nesting and types are checked before anything is decoded or parsed.
    """
    try:
        checker = _Validator()
        checker.spec(spec, 0)
        missing = checker.refs - set(checker.ids)
        if missing:
            raise _invalid(f"it refers to function ids {sorted(missing)[:5]} that it does not describe")
    except KernelSourceError:
        raise
    except Exception as error:  # noqa: BLE001 (hostile data must end in KernelSourceError)
        raise _invalid(f"{type(error).__name__} while checking it") from None


def _invalid(why):
    return KernelSourceError(f"this is not a valid kernel description: {why}.",
                             "send what course.kernelsource.describe returned, unchanged.")


def _is_name(value) -> bool:
    return (isinstance(value, str) and 0 < len(value) <= MAX_NAME_CHARS and value.isidentifier()
            and not keyword.iskeyword(value) and not (value.startswith("__") and value.endswith("__")))


def _is_int(value, low, high) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


class _Validator:
    def __init__(self):
        self.ids = {}
        self.refs = set()
        self.array_bytes = 0

    def spec(self, spec, depth):
        if depth > MAX_DEPTH:
            raise _invalid("functions are nested too deeply")
        if not isinstance(spec, dict) or set(spec) != _SPEC_KEYS:
            raise _invalid(f"a function must be an object with the keys {sorted(_SPEC_KEYS)}")
        if spec["version"] != VERSION or isinstance(spec["version"], bool):
            raise _invalid(f"version must be {VERSION}")
        if not _is_int(spec["id"], 0, MAX_FUNCTIONS - 1) or spec["id"] in self.ids:
            raise _invalid("every function needs its own id, a small integer")
        self.ids[spec["id"]] = spec
        if not isinstance(spec["jit"], bool) or not _is_name(spec["name"]):
            raise _invalid("jit must be true or false and name a Python identifier")
        filename = spec["filename"]
        if not isinstance(filename, str) or not 0 < len(filename) <= MAX_FILENAME_CHARS \
                or not filename.isprintable():
            raise _invalid("filename must be a short printable string")
        if not _is_int(spec["firstline"], 1, MAX_LINE):
            raise _invalid(f"firstline must be an integer from 1 to {MAX_LINE}")
        self._source(spec)
        for part in ("globals", "closure"):
            names = spec[part]
            if not isinstance(names, dict) or len(names) > MAX_NAMES:
                raise _invalid(f"{part} must be an object of at most {MAX_NAMES} names")
            for name, value in names.items():
                if not _is_name(name):
                    raise _invalid(f"{part} may only hold plain Python identifiers")
                self.value(value, depth + 1)
        defaults = spec["defaults"]
        if defaults is not None:
            if not isinstance(defaults, list) or len(defaults) > MAX_DEFAULTS:
                raise _invalid("defaults must be null or a short list")
            for value in defaults:
                self.value(value, depth + 1)

    def _source(self, spec):
        source = spec["source"]
        if not isinstance(source, str) or not 0 < len(source) <= MAX_SOURCE_CHARS:
            raise _invalid(f"source must be a string of at most {MAX_SOURCE_CHARS} characters")
        if spec["firstline"] + source.count("\n") > MAX_LINE:
            raise _invalid("the source ends past the last allowed line")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise _invalid(f"the source of `{spec['name']}` is not valid Python") from None
        if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
            raise _invalid("the source must be exactly one `def` statement")
        if tree.body[0].name != spec["name"]:
            raise _invalid("the source defines another function than `name`")

    def value(self, value, depth):
        if depth > MAX_DEPTH:
            raise _invalid("values are nested too deeply")
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in _VALUE_TAGS:
            raise _invalid(f"a value must be an object with one key of {sorted(_VALUE_TAGS)}")
        tag, data = next(iter(value.items()))
        if tag == "function":
            return self.spec(data, depth + 1)
        if tag == "tuple":
            if not isinstance(data, list) or len(data) > MAX_TUPLE:
                raise _invalid(f"a tuple must be a list of at most {MAX_TUPLE} values")
            for item in data:
                self.value(item, depth + 1)
            return
        if tag == "function_ref":
            if not _is_int(data, 0, MAX_FUNCTIONS - 1):
                raise _invalid("function_ref must be a function id")
            self.refs.add(data)
            return
        if tag == "array":
            self._array(data)
            return
        if not _plain_value_ok(tag, data):
            raise _invalid(f"a {tag} value is malformed")

    def _array(self, data):
        dtype = _numeric_dtype(data, {"dtype", "data", "shape"})
        shape = data.get("shape") if dtype is not None else None
        if not isinstance(shape, list) or len(shape) > MAX_NDIM \
                or not all(_is_int(n, 0, MAX_ARRAY_BYTES) for n in shape):
            raise _invalid("an array must have a numeric dtype and a shape of at most 8 sizes")
        nbytes = math.prod(shape) * dtype.itemsize
        self.array_bytes += nbytes
        if nbytes > MAX_ARRAY_BYTES or self.array_bytes > MAX_TOTAL_ARRAY_BYTES:
            raise _invalid("its arrays are too large")
        if len(data["data"]) != _base64_length(nbytes) or len(_b64decode(data["data"])) != nbytes:
            raise _invalid("an array's bytes do not match its shape")


def _plain_value_ok(tag, data) -> bool:
    if tag == "none":
        return data is None
    if tag == "bool":
        return isinstance(data, bool)
    if tag == "int":
        return _is_int(data, -2**63, 2**64 - 1)
    if tag == "float":
        return _float_text_ok(data)
    if tag == "complex":
        return isinstance(data, list) and len(data) == 2 and all(_float_text_ok(part) for part in data)
    if tag == "scalar":
        dtype = _numeric_dtype(data, {"dtype", "data"})
        return dtype is not None and len(data["data"]) == _base64_length(dtype.itemsize) \
            and len(_b64decode(data["data"])) == dtype.itemsize
    if tag == "module":
        return isinstance(data, str) and data in MODULES
    return (isinstance(data, list) and len(data) == 2 and isinstance(data[0], str) and data[0] in MODULES
            and _is_name(data[1]) and not data[1].startswith("_"))  # attribute


def _float_text_ok(text) -> bool:
    if not isinstance(text, str) or len(text) > 40:
        return False
    try:
        float.fromhex(text)
    except (ValueError, OverflowError):
        return False
    return True


def _numeric_dtype(data, keys):
    """The dtype of an encoded scalar or array, if it is a plain number type, else None."""
    if not isinstance(data, dict) or set(data) != keys or not isinstance(data["dtype"], str) \
            or len(data["dtype"]) > 8 or not isinstance(data["data"], str):
        return None
    try:
        dtype = np.dtype(data["dtype"])
    except (TypeError, ValueError):
        return None
    return dtype if dtype.kind in NUMERIC_KINDS and dtype.fields is None and dtype.shape == () else None


def _base64_length(nbytes: int) -> int:
    return 4 * ((nbytes + 2) // 3)


def _b64decode(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


# ----------------------------------------------------------------------------------------------- rebuild


def rebuild(spec, device=None):
    """A new Python function from a spec, with its device functions, all in one fresh namespace.

    `device` (e.g. ``numba.cuda.jit(device=True)``) wraps each device function that was a ``@cuda.jit``
    function where it was described; without it they are plain functions (what gpusim.jit wants).
    Validates the spec first and never runs learner code.
    """
    validate(spec)
    return _Builder(device).build(spec)


def _function_code(source, filename, firstline, name):
    """The code object of the single `def` in `source`, compiled with decorators, default values and
    annotations removed, as if the def started on line `firstline` of `filename`."""
    tree = ast.parse(source)
    node = tree.body[0]
    node.decorator_list = []
    node.returns = None
    arguments = node.args
    for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs + \
            [a for a in (arguments.vararg, arguments.kwarg) if a is not None]:
        arg.annotation = None
    arguments.defaults = []
    arguments.kw_defaults = [None] * len(arguments.kwonlyargs)
    ast.increment_lineno(tree, firstline - 1)
    module = compile(tree, filename, "exec", dont_inherit=True)
    return next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == name)


def register_lines(spec) -> None:
    """Put the source of every function in `spec` into linecache under its filename and lines, so that
    tracebacks and messages show it. Lines already cached for that file (a notebook cell, a loaded module)
    are kept where they hold the same text; no file is read."""
    for function in functions_of(spec).values():
        lines = function["source"].splitlines(True)
        first = function["firstline"] - 1
        entry = linecache.cache.get(function["filename"])
        cached = list(entry[2]) if entry is not None and len(entry) == 4 else []
        if [line.strip() for line in cached[first:first + len(lines)]] == [line.strip() for line in lines]:
            continue
        cached += ["\n"] * (first + len(lines) - len(cached))
        cached[first:first + len(lines)] = lines
        linecache.cache[function["filename"]] = (sum(map(len, cached)), None, cached, function["filename"])


def functions_of(spec) -> dict[int, dict]:
    """Every function spec in a validated spec, by id."""
    found, pending = {}, [spec]
    while pending:
        function = pending.pop()
        found[function["id"]] = function
        values = [*function["globals"].values(), *function["closure"].values(), *(function["defaults"] or [])]
        while values:
            tag, data = next(iter(values.pop().items()))
            if tag == "function":
                pending.append(data)
            elif tag == "tuple":
                values.extend(data)
    return found


class _Builder:
    def __init__(self, device):
        self.device = device
        self.namespace = {"__builtins__": builtins, "__name__": "gpusim_rebuilt_kernel"}
        self.bound = {}
        self.functions = {}
        self.callables = {}

    def build(self, spec):
        specs = functions_of(spec)
        for key, function in specs.items():
            try:
                code = _function_code(function["source"], function["filename"], function["firstline"],
                                      function["name"])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                raise _invalid(f"the source of `{function['name']}` cannot be compiled") from None
            self.functions[key] = types.FunctionType(code, self.namespace, function["name"])
            wrap = self.device is not None and function["jit"] and key != spec["id"]
            self.callables[key] = self.device(self.functions[key]) if wrap else self.functions[key]
        for key, function in specs.items():
            owner = self.functions[key]
            for part in ("globals", "closure"):
                for name, value in function[part].items():
                    self._bind(name, value, owner)
            if function["defaults"] is not None:
                owner.__defaults__ = tuple(self.value(value) for value in function["defaults"])
        register_lines(spec)
        return self.functions[spec["id"]]

    def _bind(self, name, encoded, owner):
        tag, data = next(iter(encoded.items()))
        key = ("function", data["id"] if tag == "function" else data) if tag.startswith("function") \
            else json.dumps(encoded, sort_keys=True)
        if self.bound.setdefault(name, key) != key:
            raise KernelSourceError(
                f"two functions of this kernel use the name `{name}` for different things "
                f"(`{owner.__name__}` is one of them).",
                "give the global variables and device functions that a kernel uses distinct names.")
        self.namespace[name] = self.value(encoded)

    def value(self, encoded):
        """The Python value of one validated encoded value."""
        tag, data = next(iter(encoded.items()))
        if tag in ("none", "bool", "int"):
            return data
        if tag == "float":
            return float.fromhex(data)
        if tag == "complex":
            return complex(float.fromhex(data[0]), float.fromhex(data[1]))
        if tag == "scalar":
            return np.frombuffer(_b64decode(data["data"]), dtype=np.dtype(data["dtype"]))[0]
        if tag == "array":
            array = np.frombuffer(_b64decode(data["data"]), dtype=np.dtype(data["dtype"]))
            array = array.reshape(data["shape"]).copy()
            array.flags.writeable = False  # a module-level array is a constant in a kernel, as on a GPU
            return array
        if tag == "tuple":
            return tuple(self.value(item) for item in data)
        if tag == "module":
            return importlib.import_module(MODULES[data])
        if tag == "attribute":
            return _attribute(*data)
        return self.callables[data["id"] if tag == "function" else data]


def _attribute(module_name, name):
    value = getattr(importlib.import_module(MODULES[module_name]), name, None)
    if value is None or isinstance(value, types.ModuleType):
        raise KernelSourceError(f"`{module_name}.{name}` is not something a kernel can use here.",
                                "use the names that numpy, math and numba export at their top level.")
    return value
