"""Would Triton's compiler accept this kernel? Its front end, run with no GPU, and what it says if not.

Triton's interpreter (``TRITON_INTERPRET=1``) runs a kernel as plain Python, so it accepts much that the
compiler refuses: a Python list, ``break``, an ``import``, a helper function without ``@triton.jit``, a
global that is not a ``tl.constexpr``, an ``arange`` whose length is not a power of 2. :func:`compile_check`
sends the kernel's source to a helper process where the interpreter is off
(``python -m course.tasks.tritongate``, one kept per process: :mod:`course.helperprocess`) and lowers it to
Triton IR for a Hopper GPU (``GPUTarget("cuda", 90, 32)``; the front end only: a few hundredths of a second
per kernel, plus about a second to start the helper), once per set of compile-time constants. No GPU and no
CUDA driver are needed.

    compile_check(kernel, {"x_ptr": "*fp32", "n": "i32"}, [{"BLOCK": 64}, {"BLOCK": 128}])

raises :class:`TritonCompileError` naming the line and saying what a Triton kernel can use instead.
Results are cached per source, signature and constants.
"""

from __future__ import annotations

import builtins
import hashlib
import inspect
import json
import linecache
import os
import queue
import textwrap

from course.helperprocess import HelperDied, LineHelper, serve
from gpusim import describe_line

TARGET = ("cuda", 90, 32)
TIMEOUT_S = 120.0
MODULES = {"triton", "triton.language", "math"}  # modules a kernel's globals may name
# (words in Triton's message, what it means, what to do)
EXPLANATIONS = (
    ("unsupported AST node type: Break", "A Triton kernel cannot `break` out of a loop.",
     "loop over the whole range and keep the work you do not want out with a mask (tl.where, mask=)."),
    ("unsupported AST node type: Continue", "A Triton kernel cannot `continue` a loop.",
     "keep the skipped work out with a mask (tl.where, mask=) instead."),
    ("unsupported AST node type: Import", "A Triton kernel cannot import anything.",
     "import at the top of the notebook; inside the kernel use tl.* functions."),
    ("unsupported AST node type: List", "A Triton kernel has no Python lists.",
     "build tensors with tl.arange, tl.zeros or tl.full and combine them with tensor operations."),
    ("has no attribute append", "A Triton kernel has no Python lists: `[]` is not a list there.",
     "build tensors with tl.arange, tl.zeros or tl.full and combine them with tensor operations."),
    ("power of 2", "tl.arange (and every tile shape) needs a power of 2: the compiler lays tiles out in "
     "registers by powers of 2.", "use a BLOCK that is a power of 2 (triton.next_power_of_2(n)) and mask "
     "the lanes past n."),
    ("must be of type tl.constexpr", "A tile's shape must be known when the kernel is compiled.",
     "pass the size as a `BLOCK: tl.constexpr` parameter and mask the lanes past the run-time length."),
    ("global variable", "A Triton kernel can read a module-level value only if it is a tl.constexpr.",
     "write `NAME = tl.constexpr(value)` at module level, or pass the value as an argument."),
    ("is not defined", "The kernel uses a name the compiler cannot see.",
     "use tl.* functions and @triton.jit helpers; pass everything else as arguments."),
)
PLAIN_FUNCTION = ("A function called from a Triton kernel must itself be a @triton.jit function.",
                  "decorate the helper with @triton.jit.")
GENERAL_HINT = ("a Triton kernel works on tensors from tl.arange / tl.load, with tl.* functions, "
                "tl.constexpr sizes and @triton.jit helpers only.")
_cache: dict[str, dict] = {}


class TritonCompileError(Exception):
    """Triton's compiler refuses a kernel that its interpreter runs."""


def available() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------------------------------ the kernel


def describe(kernel) -> dict:
    """The kernel (and the @triton.jit helpers it calls) as plain data: source, place, and the globals it
    names that are numbers, tl.constexpr values or modules."""
    function = getattr(kernel, "fn", kernel)
    lines, first = inspect.getsourcelines(function)
    lines = textwrap.dedent("".join(lines)).splitlines(True)
    skip = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))  # decorators
    source, first = "".join(lines[skip:]), first + skip
    spec = {"name": function.__name__, "filename": function.__code__.co_filename, "firstline": first,
            "source": source, "globals": {}, "helpers": []}
    for name in _global_names(function.__code__):
        if name not in function.__globals__:
            continue
        value = function.__globals__[name]
        described = _value(value)
        if described is not None:
            spec["globals"][name] = described
        elif hasattr(value, "fn") and type(value).__module__.startswith("triton"):
            spec["helpers"].append(describe(value))
        elif callable(value) and inspect.isfunction(value):
            spec["globals"][name] = {"plain_function": name}
    return spec


def _global_names(code) -> set[str]:
    names = set(code.co_names)
    for constant in code.co_consts:
        if inspect.iscode(constant):
            names |= _global_names(constant)
    return names


def _value(value):
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, (int, float)):
        return {type(value).__name__: value}
    if type(value).__name__ == "constexpr" and type(value).__module__.startswith("triton"):
        inner = value.value
        return {"constexpr": inner} if isinstance(inner, (bool, int, float, str)) or inner is None else None
    if inspect.ismodule(value) and value.__name__ in MODULES:
        return {"module": value.__name__}
    return None


# -------------------------------------------------------------------------------------------- checking


def compile_check(kernel, signature: dict[str, str], constants: list[dict]) -> None:
    """Raise TritonCompileError unless Triton's front end accepts the kernel for this signature (argument
    name -> Triton type such as "*fp32" or "i32") with each set of compile-time constants."""
    spec = describe(kernel)
    request = {"spec": spec, "signature": signature, "constants": constants}
    key = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
    if key not in _cache:
        _cache[key] = _ask_helper(request)
    result = _cache[key]
    if not result["ok"]:
        raise TritonCompileError(_message(spec, result))


_helper = LineHelper("course.tasks.tritongate", drop_env=("TRITON_INTERPRET",),
                     set_env={"TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1")})


def start_early() -> None:
    """Start the helper process now, in the background: importing Triton there takes about a second, which
    then passes while the learner reads, not inside the first check."""
    _helper.start_early()


def _ask_helper(request: dict) -> dict:
    with _helper.lock:
        try:
            return _helper.request(request, TIMEOUT_S)
        except queue.Empty:
            _helper.stop()
            return {"ok": False, "line": None,
                    "text": f"the compile check took longer than {TIMEOUT_S:g} s and was stopped"}
        except HelperDied as died:
            _helper.stop()
            return {"ok": False, "line": None, "text": f"the compile check's helper failed: {died}"}


def _message(spec: dict, result: dict) -> str:
    text = result["text"]
    meaning, hint = next(((m, h) for words, m, h in EXPLANATIONS if words in text), ("", GENERAL_HINT))
    plain = [name for name, value in spec["globals"].items() if "plain_function" in value]
    if any(f"variable {name} " in text for name in plain):
        meaning, hint = PLAIN_FUNCTION
    where = ""
    if result["line"]:
        filename, line = result["line"]
        where = f", at {describe_line(filename, line)}"
    shown = "\n".join(f"    {line[:240]}" + ("…" if len(line) > 240 else "")
                      for line in text.splitlines()[:4])
    return (f"Triton's compiler rejects kernel `{spec['name']}`{where}:\n{shown}" + (f"\n{meaning}" if meaning
            else "") + f"\nHint: {hint} (Triton's interpreter ran it, but a GPU could not.)")


# ----------------------------------------------------------------------------------- the helper process


def _functions(spec: dict) -> list[dict]:
    """The kernel's spec and its helpers', depth first."""
    return [spec] + [f for helper in spec["helpers"] for f in _functions(helper)]


def _register_sources(spec: dict) -> None:
    """Put every function's source at its own lines of its file, as linecache (and so Triton) reads it."""
    files: dict[str, list[str]] = {}
    for function in _functions(spec):
        lines = files.setdefault(function["filename"], [])
        first = function["firstline"] - 1
        body = function["source"].splitlines(True)
        lines.extend(["\n"] * max(0, first + len(body) - len(lines)))
        lines[first:first + len(body)] = body
    for filename, lines in files.items():
        linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)


def _rebuild(spec: dict, triton):
    """The @triton.jit function of a spec (sources already registered by _register_sources)."""
    namespace = {"__builtins__": builtins, "__name__": "learner"}
    for name, value in spec["globals"].items():
        tag, data = next(iter(value.items()))
        if tag == "module":
            namespace[name] = __import__(data, fromlist=["_"])
        elif tag == "constexpr":
            namespace[name] = triton.language.constexpr(data)
        elif tag in ("int", "float", "bool"):
            namespace[name] = data
        elif tag == "plain_function":  # a helper without @triton.jit: the compiler should refuse the call
            namespace[name] = _plain_function(spec, name)
    for helper in spec["helpers"]:
        namespace[helper["name"]] = _rebuild(helper, triton)
    padded = "\n" * (spec["firstline"] - 1) + spec["source"]
    exec(compile(padded, spec["filename"], "exec"), namespace)
    return triton.jit(namespace[spec["name"]])


def _plain_function(spec, name):
    def stand_in(*args, **kwargs):
        raise TypeError(f"`{name}` is not a @triton.jit function")

    stand_in.__name__ = name
    return stand_in


def compile_here(request: dict) -> dict:
    """The front end on this process (TRITON_INTERPRET must be off): {"ok": true} or {"ok": false, "text",
    "line": [filename, line] or null}."""
    import triton
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend
    from triton.compiler.errors import CompilationError

    spec = request["spec"]
    target = GPUTarget(*TARGET)
    backend = make_backend(target)
    try:
        _register_sources(spec)
        kernel = _rebuild(spec, triton)
        for constants in request["constants"]:
            signature = {**request["signature"], **{name: "constexpr" for name in constants}}
            source = ASTSource(fn=kernel, signature=signature, constexprs=constants)
            options = backend.parse_options(dict(source.parse_options()))
            context = ir.context()
            ir.load_dialects(context)
            backend.load_dialects(context)
            source.make_ir(target, options, backend.get_codegen_implementation(options),
                           backend.get_module_map(), context)
    except CompilationError as error:
        line = getattr(error.node, "lineno", None)
        text = error.error_message or str(error).splitlines()[-1]
        return {"ok": False, "text": _clean(text), "line": [spec["filename"], spec["firstline"] + line - 1]
                if line else None}
    except Exception as error:  # noqa: BLE001 (every refusal is the learner's to read)
        return {"ok": False, "text": _clean(f"{type(error).__name__}: {error}"), "line": None}
    return {"ok": True}


def _clean(text: str) -> str:
    return "\n".join(line for line in text.strip().splitlines() if "site-packages" not in line)[:1000]


def main() -> None:
    """The helper process: one request per line of stdin, its answer a line of stdout."""
    serve(compile_here)


if __name__ == "__main__":
    main()
