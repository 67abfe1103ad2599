"""Would Numba's CUDA compiler accept this kernel? Compile it for a GPU, with no GPU, and say why not.

    compilegate.available()                           # (True, "...") where NVRTC and NVVM can be found
    compilegate.start_early()                         # a notebook's helper process, started in the background
    compilegate.compile_kernel(spec, signature)       # None, or raises gpusim.CompileError
    compilegate.compile_kernel(spec, signature, arithmetic="float32")   # ... or PrecisionError
    spec = kernelsource.describe(kernel); signature = compilegate.signature_of(args)

The kernel is rebuilt from its spec (:mod:`course.kernelsource`) and compiled with
``numba.cuda.compile_ptx(kernel, types, cc=TARGET_CC)``, which needs NVIDIA's NVRTC and NVVM libraries (the
``nvidia-cuda-nvrtc`` and ``nvidia-nvvm`` wheels) but no GPU and no driver. Numba's simulator must be off
in the compiling process, so where it is on (``NUMBA_ENABLE_CUDASIM=1``, as in the course's CPU mode) the
compile runs in one helper process per Python process (``python -m course.compilegate``), started on first
use, restarted if it dies, stopped at exit, with a deadline per kernel. Results are cached per spec and
signature. ``available()`` only asks cuda-pathfinder (the library finder numba-cuda itself uses) whether
the two libraries and libdevice can be found: a few hundredths of a second, once per process, with no numba
import.

The PTX is compiled with line information, so that the float64 instructions in it (arithmetic, and loads and
stores of float64 shared or local arrays) can be traced to the learner's lines: ``arithmetic="float32"``
refuses them with :class:`PrecisionError`.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import linecache
import os
import queue
import re
import sys
import threading
import types
import warnings
from collections import OrderedDict

import numpy as np

from gpusim import CompileError, describe_line

from .helperprocess import HelperDied, LineHelper, serve
from .kernelsource import KernelSourceError, functions_of, rebuild, register_lines, validate

TARGET_CC = (9, 0)  # Hopper: what the course's GPUs are
COMPILE_TIMEOUT_S = 60.0  # one kernel, helper start included; a compile usually takes well under 1 s
MAX_CACHED = 512
MAX_ARGS = 64
MAX_SHOWN_LINES = 4
SCALAR_TYPES = ("boolean", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128")
LAYOUTS = ("C", "F", "A")

GENERAL_HINT = CompileError.hint
_ALLOCATION = ("A kernel cannot create arrays: a GPU thread has no memory allocator.",
               "use cuda.local.array(n, float32) for a thread's own scratch, cuda.shared.array((n,), "
               "float32) for a block's, or pass an output array to the kernel.")
# (words in Numba's message, what they mean for a learner, hint)
EXPLANATIONS = (
    *((f"built-in function {name}>", *_ALLOCATION) for name in
      ("zeros", "empty", "ones", "full", "arange", "array", "zeros_like", "empty_like", "ones_like", "copy")),
    ("NRT required", "A list, dict, set or string (printing one too) needs memory that a GPU kernel cannot "
     "allocate.", "use numbers and tuples, cuda.local.array(n, float32) or cuda.shared.array for scratch "
     "space, and print only numbers."),
    ("unsupported opcode (IMPORT", "A kernel cannot import anything.",
     "move the import to the top of the notebook: kernels use math, numpy and cuda imported outside them."),
    ("void return type", "A kernel cannot return a value.",
     "write the result into an output array argument instead of returning it."),
    ("readonly array", "A module-level NumPy array is a read-only constant inside a kernel.",
     "pass the array to the kernel as an argument if the kernel writes to it."),
    ("Untyped global name", "The kernel uses a Python object that Numba cannot compile.",
     "decorate helper functions with @cuda.jit(device=True); pass data as arguments."),
    ("linear algebra", "np.linalg is not available inside a GPU kernel.",
     "compute it with loops in the kernel, or outside the kernel."),
    ("list(", "A Python list cannot live in a GPU kernel.",
     "use a tuple of numbers, cuda.local.array(n, dtype) or cuda.shared.array for scratch space."),
    ("No implementation of function Function(<built-in function", "Numba has no GPU version of this function "
     "for these arguments (NumPy's array functions mostly have none).",
     "write the loop yourself: each thread computes its own elements from the arrays it reads."),
)
_NOISE = re.compile(r"^(During:|Failed in |<source elided>|\^|raised from|- Of which|Overload |"
                    r"Operator Overload|With argument|No match|There are \d+ candidate|\* \(|Rejected as|"
                    r"Ensure that)")
_LOCATIONS = re.compile(r'File "(?P<f1>[^"\n]+)", line (?P<l1>\d+)|(?:\bat|Raised from) (?P<f2>\S[^\n]*?) '
                        r'\((?P<l2>\d+)\)')
# PTX float64 work: arithmetic, and loads and stores of float64 shared or local arrays (not conversions or
# comparisons, which a float32 kernel may need at its edges).
_FLOAT64_OP = re.compile(r"^\s*(?:@!?%p\d+\s+)?((?:add|sub|mul|fma|mad|div|rcp|sqrt|rsqrt|neg|abs|min|max)"
                         r"(?:\.\w+)*\.f64|(?:ld|st)\.(?:shared|local)(?:\.\w+)*\.f64)\b")
# A float32 value carried as float64 and narrowed back (`x if ok else 0.0`: the branches meet as float64):
# a widening into a register that a narrowing then reads.
_WIDEN = re.compile(r"^\s*(?:@!?%p\d+\s+)?cvt(?:\.\w+)*\.f64\.f32\s+(%fd\d+),")
_NARROW = re.compile(r"^\s*(?:@!?%p\d+\s+)?(cvt(?:\.\w+)*\.f32\.f64)\s+%f\d+,\s*(%fd\d+);")
_PTX_FUNCTION = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\b")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s")
MAX_FLOAT64_SITES = 6
FLOAT64_EXPLAINED = (
    "In Numba a float literal such as 0.0 or 0.5 is a float64, and float32 combined with float64 gives "
    "float64: `acc = 0.0` makes every sum into acc float64, `0.5 * x` makes the product float64, "
    "`x if ok else 0.0` carries x as float64 (widened, then narrowed again where it is stored), and a "
    "float64 shared or local array holds float64. A GPU runs float64 2 to 64 times slower than float32 (most "
    "GeForce cards 64 times).")
FLOAT64_HINT = ("write float32 constants, float32(0.0) or float32(0.5) (`from numba import float32`), and "
                "declare arrays with float32.")


class PrecisionError(CompileError):
    """The kernel compiles to float64 arithmetic where the task asks for float32."""

    hint = FLOAT64_HINT


# -------------------------------------------------------------------------------------------- signatures


def signature_of(args) -> list:
    """The argument types of a launch as plain data: arrays by dtype, ndim and layout, scalars by the
    Numba type they get (int -> int64, float -> float64, np.float32 -> float32), tuples item by item."""
    return [_argument_type(value, index) for index, value in enumerate(args)]


def _argument_type(value, index):
    if isinstance(value, tuple):
        return {"tuple": [_argument_type(item, index) for item in value]}
    if isinstance(value, (bool, np.bool_)):
        return {"scalar": "boolean"}
    if isinstance(value, int):
        return {"scalar": "int64"}
    if isinstance(value, float):
        return {"scalar": "float64"}
    if isinstance(value, complex):
        return {"scalar": "complex128"}
    if isinstance(value, np.generic) and value.dtype.name in SCALAR_TYPES:
        return {"scalar": value.dtype.name}
    described = _array_type(value)
    if described is None:
        raise CompileError(f"argument {index + 1} of the launch is {type(value).__name__}, which a GPU "
                           f"kernel cannot take.", "pass NumPy arrays, torch tensors or numbers.")
    return {"array": described}


def _array_type(value):
    """{"dtype", "ndim", "layout"} of an array-like argument, or None."""
    array = value if isinstance(value, np.ndarray) else getattr(value, "_ary", None)
    if isinstance(array, np.ndarray):
        dtype, shape, strides = array.dtype, array.shape, array.strides
    else:
        interface = getattr(value, "__cuda_array_interface__", None)
        if interface is None and type(value).__module__.startswith("torch"):
            try:
                interface = np.asarray(value.detach()).__array_interface__
            except (TypeError, RuntimeError):  # bfloat16 and other types NumPy lacks
                return None
        if not isinstance(interface, dict):
            return None
        dtype, shape = np.dtype(interface["typestr"]), tuple(interface["shape"])
        strides = interface.get("strides") or _c_strides(shape, dtype.itemsize)
    name = "boolean" if dtype.name == "bool" else dtype.name
    if name not in SCALAR_TYPES:
        return None
    layout = "C" if strides == _c_strides(shape, dtype.itemsize) else \
        "F" if strides == _c_strides(shape[::-1], dtype.itemsize)[::-1] else "A"
    if isinstance(array, np.ndarray):  # numpy's own flags, as Numba reads them
        layout = "C" if array.flags.c_contiguous else "F" if array.flags.f_contiguous else "A"
    return {"dtype": name, "ndim": len(shape), "layout": layout}


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def check_signature(signature) -> None:
    """KernelSourceError unless `signature` is as `signature_of` writes it (it may come from elsewhere)."""
    if not isinstance(signature, list) or len(signature) > MAX_ARGS \
            or not all(_type_ok(item, 0) for item in signature):
        raise KernelSourceError("this is not a valid kernel signature.",
                                "send what course.compilegate.signature_of returned, unchanged.")


def _type_ok(item, depth) -> bool:
    if not isinstance(item, dict) or len(item) != 1 or depth > 4:
        return False
    tag, data = next(iter(item.items()))
    if tag == "scalar":
        return isinstance(data, str) and data in SCALAR_TYPES
    if tag == "tuple":
        return isinstance(data, list) and len(data) <= MAX_ARGS and all(_type_ok(i, depth + 1) for i in data)
    return (tag == "array" and isinstance(data, dict) and set(data) == {"dtype", "ndim", "layout"}
            and isinstance(data["dtype"], str) and data["dtype"] in SCALAR_TYPES
            and isinstance(data["layout"], str) and data["layout"] in LAYOUTS
            and type(data["ndim"]) is int and 0 <= data["ndim"] <= 8)


def argument_types(signature) -> tuple:
    """Numba types for a checked signature (in the compiling process: imports numba)."""
    from numba.core import types as numba_types

    def convert(item):
        tag, data = next(iter(item.items()))
        if tag == "scalar":
            return getattr(numba_types, data)
        if tag == "tuple":
            return numba_types.Tuple([convert(i) for i in data])
        return numba_types.Array(getattr(numba_types, data["dtype"]), data["ndim"], data["layout"])

    return tuple(convert(item) for item in signature)


# ------------------------------------------------------------------------------------------ availability


@functools.cache
def available() -> tuple[bool, str]:
    """(True, where) when NVRTC, NVVM and libdevice can be found, else (False, why and what to install)."""
    install = ("the compile check is skipped. It needs NVIDIA's NVRTC and NVVM libraries: `pip install "
               "nvidia-cuda-nvrtc nvidia-nvvm` (wheels exist for Linux and Windows on x86_64 and ARM64).")
    try:
        from cuda import pathfinder
    except ImportError as error:
        return False, f"cuda-pathfinder cannot be imported ({error}); {install}"
    try:
        found = [pathfinder.load_nvidia_dynamic_lib(name).abs_path for name in ("nvrtc", "nvvm")]
        pathfinder.find_bitcode_lib("device")
    except Exception as error:  # noqa: BLE001 (each pathfinder failure means "not here")
        return False, f"{str(error).splitlines()[0] if str(error) else type(error).__name__}; {install}"
    return True, f"Numba's CUDA compiler is available ({', '.join(found)})"


# --------------------------------------------------------------------------------------------- compiling


_cache: OrderedDict[str, dict] = OrderedDict()
_cache_lock = threading.Lock()


def start_early() -> None:
    """Start the helper process now, in the background, where checks will compile through one (Numba's
    simulator on, the compiler installed): the seconds it spends importing Numba then pass while the learner
    reads and writes, not inside the first check cell. The first compile waits for it as before."""
    if _simulator_on() and available()[0]:
        _helper.start_early()


def compile_kernel(spec, signature, arithmetic: str | None = None) -> None:
    """Compile the described kernel for the given argument types with Numba's CUDA compiler (for compute
    capability TARGET_CC). Returns None if it compiles; raises CompileError naming the kernel line and
    saying what a kernel can use, KernelSourceError for an invalid spec, RuntimeError where the compiler
    is not available (ask `available()` first). With ``arithmetic="float32"``, PrecisionError naming the
    lines where the compiled code holds float64 arithmetic."""
    validate(spec)
    check_signature(signature)
    ok, why = available()
    if not ok:
        raise RuntimeError(why)
    key = hashlib.sha256(json.dumps([spec, signature, TARGET_CC], sort_keys=True).encode()).hexdigest()
    with _cache_lock:
        result = _cache.get(key)
    if result is None:
        result = _compile(spec, signature)
        with _cache_lock:
            _cache[key] = result
            while len(_cache) > MAX_CACHED:
                _cache.popitem(last=False)
    _raise_for(spec, result)
    if arithmetic == "float32" and result.get("float64"):
        _refuse_float64(spec, result["float64"])


def _compile(spec, signature) -> dict:
    """The result of one compile (see `compile_here`), here or in the helper process."""
    if _simulator_on():
        return _compiler.compile(spec, signature)
    return compile_here(spec, signature)


def _simulator_on() -> bool:
    config = sys.modules.get("numba.cuda.core.config")
    if config is not None and "numba.cuda" in sys.modules:
        return bool(config.ENABLE_CUDASIM)
    try:
        return int(os.environ.get("NUMBA_ENABLE_CUDASIM", "0") or 0) != 0
    except ValueError:
        return False


def compile_here(spec, signature) -> dict:
    """Compile in this process (Numba's simulator must be off). Plain data: {"ok": true, "float64": the
    float64 sites of the PTX as [filename, line, instruction]}, or
    {"ok": false, "text": Numba's message trimmed, "line": [filename, lineno] or null, "kind": index into
    EXPLANATIONS or -1} or {"ok": false, "source_error": [message, hint]}."""
    import numba.cuda
    from numba.cuda.core.compiler_lock import global_compiler_lock

    if numba.cuda.core.config.ENABLE_CUDASIM:
        raise RuntimeError("compile_here needs a process where NUMBA_ENABLE_CUDASIM is not set")
    with global_compiler_lock, _target_device(), _source_lines(spec), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            kernel = rebuild(spec, device=numba.cuda.jit(device=True))
            ptx, _ = numba.cuda.compile_ptx(kernel, argument_types(signature), cc=TARGET_CC, lineinfo=True)
        except KernelSourceError as error:
            return {"ok": False, "source_error": [error.detail, str(error).rsplit("\nHint: ", 1)[-1]]}
        except Exception as error:  # noqa: BLE001 (every compiler complaint is the learner's to read)
            return _failure(error, spec)
    return {"ok": True, "float64": float64_sites(ptx, spec)}


def float64_sites(ptx: str, spec) -> list[list]:
    """[filename, line, instruction] of the PTX's float64 work, one per source line of the kernel or its
    device functions (line 0 where the compiler gives none), at most MAX_FLOAT64_SITES, by line."""
    files = {f["filename"] for f in functions_of(spec).values()}
    widened = _widened_registers(ptx)
    names, location, found, function = {}, ("", 0), {}, -1
    for text in ptx.splitlines():
        if _PTX_FUNCTION.match(text):
            function += 1
        elif match := _PTX_FILE.match(text):  # the .file directives come after the code
            names[match[1]] = next((f for f in files if match[2] == f or match[2].endswith("/" + f)), None)
        elif match := _PTX_LOC.match(text):
            location = (match[1], int(match[2]))
        elif match := _FLOAT64_OP.match(text):
            found.setdefault(location, match[1])
        elif (match := _NARROW.match(text)) and match[2] in widened.get(function, ()):
            found.setdefault(location, f"{match[1]} (a float32 value carried as float64)")
    located = [[names[index], line, op] if names.get(index) and line else [spec["filename"], 0, op]
               for (index, line), op in found.items()]
    unique = {(name, line): [name, line, op] for name, line, op in located}
    return sorted(unique.values(), key=lambda site: (site[1] == 0, site[1]))[:MAX_FLOAT64_SITES]


def _widened_registers(ptx: str) -> dict[int, set[str]]:
    """Per PTX function (by order), the float64 registers that a float32 value is widened into."""
    widened, function = {}, -1
    for text in ptx.splitlines():
        if _PTX_FUNCTION.match(text):
            function += 1
        elif match := _WIDEN.match(text):
            widened.setdefault(function, set()).add(match[1])
    return widened


def _refuse_float64(spec, found) -> None:
    register_lines(spec)
    lines = [f"    {op} at {describe_line(name, line)}" if line else
             f"    {op} (the compiler gives no line for it)" for name, line, op in found]
    inlined = (" (the work of a device function shows at the line that calls it, where the compiler inlines "
               "it)" if len(functions_of(spec)) > 1 else "")
    raise PrecisionError(f"kernel `{spec['name']}` compiles to float64 instructions{inlined}:\n"
                         + "\n".join(lines) + f"\n{FLOAT64_EXPLAINED}")


class _source_lines:
    """For the duration of a compile, linecache holds exactly the spec's functions under their file names
    (blank lines around them): line information makes Numba parse each function's source from linecache,
    and lines left there by another kernel of the same cell would spoil it. Restored afterwards."""

    def __init__(self, spec):
        self.files: dict[str, list[str]] = {}
        for function in functions_of(spec).values():
            lines = self.files.setdefault(function["filename"], [])
            first, body = function["firstline"] - 1, function["source"].splitlines(True)
            lines += ["\n"] * (first + len(body) - len(lines))
            lines[first:first + len(body)] = body

    def __enter__(self):
        self.saved = {name: linecache.cache.get(name) for name in self.files}
        for name, lines in self.files.items():
            linecache.cache[name] = (sum(map(len, lines)), None, lines, name)

    def __exit__(self, *exc):
        for name, entry in self.saved.items():
            if entry is None:
                linecache.cache.pop(name, None)
            else:
                linecache.cache[name] = entry


class _target_device:
    """Device functions ask the current GPU for its compute capability while compiling; with no GPU there
    is none, so for the duration of a compile (under Numba's compiler lock) they are told TARGET_CC."""

    def __enter__(self):
        from numba.cuda import dispatcher

        self.dispatcher, self.saved = dispatcher, dispatcher.get_current_device
        dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=TARGET_CC)

    def __exit__(self, *exc):
        self.dispatcher.get_current_device = self.saved


def _failure(error, spec) -> dict:
    text = str(error) or type(error).__name__
    kind = next((index for index, (words, _, _) in enumerate(EXPLANATIONS) if words in text), -1)
    return {"ok": False, "text": _trim(text), "line": _error_line(error, text, spec), "kind": kind}


def _trim(text: str) -> str:
    """The lines of Numba's message a learner needs: no pipeline stages, candidate lists, source excerpts
    (the message shows the line itself) or paths inside numba."""
    kept, in_excerpt = [], False
    for raw in text.splitlines():
        line = re.sub(r"\s*Raised from .*$", "", raw.strip())
        if line.startswith('File "'):
            in_excerpt = True
        elif in_excerpt:
            in_excerpt = bool(line) and not line.startswith("^")
        elif line and not _NOISE.match(line) and "site-packages" not in line and "/numba" not in line \
                and line[:200] not in kept:
            kept.append(line[:200])
    return "\n".join(kept[:MAX_SHOWN_LINES]) or text.strip().splitlines()[0][:200]


def _error_line(error, text, spec):
    """[filename, line] of the learner's code where the compile failed, innermost first, or None."""
    functions = functions_of(spec).values()
    files = {f["filename"] for f in functions}
    by_base = {os.path.basename(name): name for name in files}
    for match in _LOCATIONS.finditer(text):
        name, line = (match["f1"], match["l1"]) if match["f1"] else (match["f2"], match["l2"])
        name = name if name in files else by_base.get(os.path.basename(name))
        if name is not None:
            return [name, int(line)]
    found = None
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        tb = error.__traceback__
        while tb is not None:
            for local in ("loc", "inst", "stmt", "expr"):
                value = tb.tb_frame.f_locals.get(local)
                loc = value if local == "loc" else getattr(value, "loc", None)
                if getattr(loc, "filename", None) in files and isinstance(getattr(loc, "line", None), int):
                    found = [loc.filename, loc.line]
            tb = tb.tb_next
        error = error.__cause__ or error.__context__
    if found is None and "void return type" in text:
        found = _return_line(spec)
    return found


def _return_line(spec):
    tree = ast.parse(spec["source"])
    for node in ast.walk(tree.body[0]):
        if isinstance(node, ast.Return) and node.value is not None:
            return [spec["filename"], spec["firstline"] + node.lineno - 1]
    return None


def _raise_for(spec, result) -> None:
    if result["ok"]:
        return
    if "source_error" in result:
        raise KernelSourceError(*result["source_error"])
    where = ""
    if result["line"] is not None:
        register_lines(spec)
        where = f", at {describe_line(*result['line'])}"
        function = _function_at(spec, *result["line"])
        if function is not None and function["id"] != spec["id"]:
            where = f" in device function `{function['name']}`{where}"
    meaning, hint = ("", GENERAL_HINT) if result["kind"] < 0 else EXPLANATIONS[result["kind"]][1:]
    text = "\n".join(f"    {line}" for line in result["text"].splitlines())
    raise CompileError(f"Numba's CUDA compiler rejects kernel `{spec['name']}`{where}:\n{text}"
                       + (f"\n{meaning}" if meaning else ""), hint)


def _function_at(spec, filename, line):
    """The function spec whose source holds that line, or None."""
    for function in functions_of(spec).values():
        last = function["firstline"] + function["source"].count("\n")
        if function["filename"] == filename and function["firstline"] <= line <= last:
            return function
    return None


# ------------------------------------------------------------------------------------ the helper process


class _Compiler:
    """The helper process that compiles for this one (course.helperprocess), and what its failures mean
    for a learner."""

    def __init__(self):
        self.lines = LineHelper("course.compilegate", drop_env=("NUMBA_ENABLE_CUDASIM",), valid=_result_ok)

    def compile(self, spec, signature) -> dict:
        with self.lines.lock:
            for attempt in range(2):
                try:
                    return self.lines.request({"spec": spec, "signature": signature}, COMPILE_TIMEOUT_S)
                except HelperDied as died:
                    self.lines.stop()
                    if attempt:
                        raise CompileError(f"the compiler process stopped while compiling kernel "
                                           f"`{spec['name']}`: {died}",
                                           "run the check again; if it happens again, simplify the kernel."
                                           ) from None
                except queue.Empty:
                    self.lines.stop()
                    raise CompileError(f"compiling kernel `{spec['name']}` took longer than "
                                       f"{COMPILE_TIMEOUT_S:g} s and was stopped.",
                                       "run the check again when the machine is less busy; a kernel "
                                       "normally compiles in about a second.") from None
                except BaseException:
                    self.lines.stop()
                    raise


def _result_ok(result) -> bool:
    """Is this what `compile_here` returns?"""
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        return False
    if result["ok"]:
        sites = result.get("float64", [])
        return isinstance(sites, list) and len(sites) <= MAX_FLOAT64_SITES and all(
            isinstance(site, list) and len(site) == 3 and isinstance(site[0], str) and type(site[1]) is int
            and isinstance(site[2], str) for site in sites)
    if "source_error" in result:
        error = result["source_error"]
        return isinstance(error, list) and len(error) == 2 and all(isinstance(part, str) for part in error)
    line = result.get("line")
    return (isinstance(result.get("text"), str) and type(result.get("kind")) is int
            and -1 <= result["kind"] < len(EXPLANATIONS)
            and (line is None or isinstance(line, list) and len(line) == 2 and isinstance(line[0], str)
                 and type(line[1]) is int))


_compiler = _Compiler()
_helper = _compiler.lines


def _answer(request) -> dict:
    """One request of the helper process: the result of compiling its spec for its signature."""
    try:
        validate(request["spec"])
        check_signature(request["signature"])
        return compile_here(request["spec"], request["signature"])
    except KernelSourceError as error:
        return {"ok": False, "source_error": [error.detail, str(error).rsplit("\nHint: ", 1)[-1]]}


def main() -> None:
    """The helper process: one JSON request per line on stdin, one JSON result per line on stdout."""
    serve(_answer)


if __name__ == "__main__":
    main()
