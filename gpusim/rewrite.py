"""Recompile a kernel from its source for a faster run: barrier statements become yields (gpusim.generators)
and, in checked launches, element accesses pass their call site (gpusim.sitecalls). The new function keeps
the kernel's file name, line numbers, globals, closure and defaults, so messages, sites and counters read as
before. Without source, or if the source no longer matches the running code, the kernel runs unchanged.
"""

import ast
import copy
import inspect
import textwrap
import types

from . import generators, sitecalls
from .sourcetext import source_lines

_cache = {}


def rewrite(fn, device_functions, fake_cuda, arrays, tag):
    """(function to run, whether it is a generator function) for the rebound kernel `fn` of a launch:
    `arrays` names the parameters that received checked arrays (empty for an unchecked launch), `tag` is
    the kernel's code tag."""
    cuda_names = tuple(sorted(name for name, value in fn.__globals__.items() if value is fake_cuda))
    generator = generators.generator_names(fn, device_functions, fake_cuda) is not None
    key = (fn.__code__, cuda_names, generator, frozenset(arrays), tag)
    if key not in _cache:
        _cache[key] = None
        _cache[key] = _compile(fn.__code__, cuda_names, generator, arrays, tag)
    code = _cache[key]
    if code is None:
        return fn, False
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new, bool(code.co_flags & inspect.CO_GENERATOR)


def _compile(code, cuda_names, generator, arrays, tag):
    """The rewritten code object (a generator's if `generator` and the barriers allow), or None when nothing
    is gained or it is unsafe. `cuda_names`: the global names of gpusim's `cuda` in the kernel."""
    try:
        lines, first = source_lines(code)
    except (OSError, TypeError):
        return None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    inner = tree.body[0]
    inner.decorator_list = []
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(inner)):
        return None
    if generator:
        trial = copy.deepcopy(inner)
        generator = generators.yields_for_barriers(trial, cuda_names)
        if generator:
            tree.body[0] = inner = trial
    placeholders = []
    if arrays:
        names = sitecalls.array_names(inner, arrays, cuda_names)
        taken = {c for c in _constants(code) if isinstance(c, int)}
        calls = sitecalls.SiteCalls(names, taken)
        inner.body = [calls.visit(statement) for statement in inner.body]
        placeholders = calls.placeholders
    if not generator and not placeholders:
        return None
    ast.fix_missing_locations(tree)  # before moving the lines: new nodes take their statement's line
    ast.increment_lineno(tree, first - 1)
    freevars = code.co_freevars
    if freevars:  # compile inside a function that binds the closure's names, so that they stay free variables
        outer = ast.FunctionDef(
            name="_gpusim_closure", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                       defaults=[]),
            body=[ast.Assign([ast.Name(v, ast.Store())], ast.Constant(None)) for v in freevars] + [inner],
            decorator_list=[], returns=None, type_comment=None,
        )
        tree.body = [ast.copy_location(outer, inner)]
    ast.fix_missing_locations(tree)
    module = compile(tree, code.co_filename, "exec")
    found = [c for c in _codes(module) if c.co_name == code.co_name and c is not module
             and c.co_name != "_gpusim_closure"]
    if len(found) != 1 or not _same_function(code, found[0], cuda_names):
        return None
    new = found[0]
    if placeholders:
        new = sitecalls.resolve(new, set(placeholders), tag)
    return new


def _same_function(code, new, cuda_names):
    """Does `new` (compiled from the source file) still match `code` (what Python runs): same variables, names
    and lines? A source file edited since the kernel was defined fails this."""
    def lines(c):  # the lines of its instructions, but for the first line (`@cuda.jit` or `def`)
        skip = (None, c.co_firstlineno)
        return {line for c2 in _codes(c) for _, _, line in c2.co_lines() if line not in skip}

    def constants(c):  # every constant but code objects, with its type (1 and 1.0 differ)
        return {(type(k), k) for c2 in _codes(c) for k in c2.co_consts if not isinstance(k, types.CodeType)}

    added = set(new.co_names) - set(code.co_names)
    dropped = set(code.co_names) - set(new.co_names)
    return (new.co_varnames == code.co_varnames and new.co_freevars == code.co_freevars
            and new.co_argcount == code.co_argcount and added <= sitecalls.METHODS
            and dropped <= {"syncthreads", *cuda_names} and lines(new) <= lines(code)
            and constants(code) <= constants(new))


def _codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _constants(code):
    for c in _codes(code):
        yield from c.co_consts
