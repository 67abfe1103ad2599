"""Rewrite a kernel's source for the vector engine (gpusim.wave): the function runs once per wave of threads,
with per-thread values as gpusim.lanes.Lanes, and every place where threads may part ways goes through the
wave object `__R`, which keeps the mask of active lanes.

- `x = e` becomes `x = __R.asg(x, e)` (lanes outside the mask keep their old value); every local starts as
  __R.UNDEF, so that a lane that reads a variable it never assigned makes the engine give up;
- `if t:` runs natively when t is the same on every active lane, else both branches under masks;
- `for` over a range and `while` loops run under a loop mask; `break`, `continue` and `return` are plain
  Python when every active lane takes them, else lanes leave (return) or the engine gives up (break,
  continue);
- `a[i]`, `a[i] = v`, calls, `and`, `or`, `not`, `x if t else y` and chained comparisons go through `__R`.

A kernel with constructs the engine does not model (try, with, nested functions, comprehensions, ...) gets a
reason instead of a function, and runs on the thread engine.
"""

import ast
import copy
import operator
import textwrap
import types

from .sourcetext import source_lines

_R = "__R"
_UNSUPPORTED = (ast.Try, ast.With, ast.AsyncWith, ast.AsyncFor, ast.AsyncFunctionDef, ast.FunctionDef,
                ast.ClassDef, ast.Global, ast.Nonlocal, ast.Delete, ast.Import, ast.ImportFrom, ast.Lambda,
                ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr, ast.Starred,
                ast.Yield, ast.YieldFrom, ast.Await, ast.AnnAssign, ast.Match, ast.JoinedStr)
_COMPARE_OPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
                ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
                ast.In: operator.contains, ast.NotIn: None}

_cache = {}


class Unsupported(Exception):
    """The kernel uses a construct the vector engine does not model."""


def _name(identifier, load=True):
    return ast.Name(identifier, ast.Load() if load else ast.Store())


def _r(method, *args, keywords=()):
    return ast.Call(ast.Attribute(_name(_R), method, ast.Load()), list(args), list(keywords))


def _lambda(body):
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.Lambda(arguments, body)


class _Expressions(ast.NodeTransformer):
    """Expressions: element accesses, calls, and, or, not, if-else and chained comparisons through `__R`."""

    def __init__(self, sites):
        self.sites = sites

    def site(self):
        self.sites[0] += 1
        if self.sites[0] >= 1 << 16:
            raise Unsupported("more than 65535 element accesses and calls")
        return ast.Constant(self.sites[0])

    def generic_visit(self, node):
        if isinstance(node, _UNSUPPORTED):
            raise Unsupported(type(node).__name__)
        return super().generic_visit(node)

    def visit_Subscript(self, node):
        if not isinstance(node.ctx, ast.Load):
            raise Unsupported("an element store inside an expression")
        value, index = self.visit(node.value), self.visit(node.slice)
        return _r("ld", value, index, self.site())

    def visit_Call(self, node):
        func = self.visit(node.func)
        args = [self.visit(a) for a in node.args]
        keywords = []
        for keyword in node.keywords:
            if keyword.arg is None:
                raise Unsupported("**kwargs in a call")
            keywords.append(ast.keyword(keyword.arg, self.visit(keyword.value)))
        return _r("call", self.site(), func, *args, keywords=keywords)

    def visit_BoolOp(self, node, test=False):
        values = [self.visit(v) for v in node.values]
        method = "and_" if isinstance(node.op, ast.And) else "or_"
        return _r(method, ast.Constant(test), values[0], *(_lambda(v) for v in values[1:]))

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return _r("not_", self.visit(node.operand))
        return self.generic_visit(node)

    def visit_IfExp(self, node):
        body, orelse = _lambda(self.visit(node.body)), _lambda(self.visit(node.orelse))
        return _r("ifexp", self.test(node.test), body, orelse)

    def visit_Compare(self, node, test=False):
        if len(node.ops) == 1:
            return self.generic_visit(node)
        steps = []
        for op, right in zip(node.ops, node.comparators, strict=True):
            function = _COMPARE_OPS[type(op)]
            if function in (None, operator.contains):
                raise Unsupported("in / not in inside a chained comparison")
            steps.append(ast.Tuple([ast.Constant(function.__name__), _lambda(self.visit(right))], ast.Load()))
        return _r("chain", ast.Constant(test), self.visit(node.left), *steps)

    def test(self, node):
        """An expression whose value only decides a branch: and/or give truth values only."""
        if isinstance(node, ast.BoolOp):
            return self.visit_BoolOp(node, test=True)
        if isinstance(node, ast.Compare):
            return self.visit_Compare(node, test=True)
        return self.visit(node)


class _Statements:
    """Statements, with masks around every place where lanes may part ways."""

    def __init__(self):
        self.sites = [0]
        self.expressions = _Expressions(self.sites)
        self.temporaries = 0

    def temporary(self, prefix):
        self.temporaries += 1
        return f"__{prefix}{self.temporaries}"

    def block(self, statements):
        out = []
        for statement in statements:
            out.extend(self.statement(statement))
        return out or [ast.Pass()]

    def expr(self, node):
        return self.expressions.visit(node)

    def statement(self, node):
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise Unsupported(type(node).__name__)
        return method(node)

    def _assign_name(self, name, value):
        return ast.Assign([_name(name, load=False)], _r("asg", _name(name), value))

    def _Assign(self, node):
        if len(node.targets) != 1:
            raise Unsupported("a = b = value")
        target = node.targets[0]
        if isinstance(target, ast.Name):
            return [self._assign_name(target.id, self.expr(node.value))]
        if isinstance(target, ast.Subscript):
            return [ast.Expr(_r("st", self.expr(target.value), self.expr(target.slice), self.expr(node.value),
                                self.expressions.site()))]
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            held = self.temporary("t")
            out = [ast.Assign([_name(held, load=False)], _r("unpack", self.expr(node.value),
                                                             ast.Constant(len(target.elts))))]
            for i, element in enumerate(target.elts):
                item = ast.Subscript(_name(held), ast.Constant(i), ast.Load())
                out.append(self._assign_name(element.id, item))
            return out
        raise Unsupported("an assignment to this kind of target")

    def _AugAssign(self, node):
        target = node.target
        if isinstance(target, ast.Name):
            value = ast.BinOp(_name(target.id), node.op, self.expr(node.value))
            return [self._assign_name(target.id, value)]
        if isinstance(target, ast.Subscript):
            array, index = self.temporary("a"), self.temporary("i")
            load = _r("ld", _name(array), _name(index), self.expressions.site())
            value = ast.BinOp(load, node.op, self.expr(node.value))
            return [ast.Assign([_name(array, load=False)], self.expr(target.value)),
                    ast.Assign([_name(index, load=False)], self.expr(target.slice)),
                    ast.Expr(_r("st", _name(array), _name(index), value, self.expressions.site()))]
        raise Unsupported("an augmented assignment to this kind of target")

    def _Expr(self, node):
        if isinstance(node.value, ast.Constant):
            return []  # a docstring
        return [ast.Expr(self.expr(node.value))]

    def _Pass(self, node):
        return [ast.Pass()]

    def _If(self, node):
        held = self.temporary("c")
        body, orelse = self.block(node.body), self.block(node.orelse)
        masked = [ast.Expr(_r("push", _name(held))),
                  ast.Try(body=[*copy.deepcopy(body), ast.Expr(_r("flip")), *copy.deepcopy(orelse)],
                          handlers=[], orelse=[], finalbody=[ast.Expr(_r("pop"))])]
        uniform_false = ast.If(ast.Compare(_name(held), [ast.Is()], [ast.Constant(False)]), orelse, masked)
        return [ast.Assign([_name(held, load=False)], _r("test", self.expressions.test(node.test))),
                ast.If(ast.Compare(_name(held), [ast.Is()], [ast.Constant(True)]), body, [uniform_false])]

    def _loop(self, loop):
        return [ast.Expr(_r("loop_push")),
                ast.Try(body=[loop], handlers=[], orelse=[], finalbody=[ast.Expr(_r("loop_pop"))])]

    def _For(self, node):
        if node.orelse or not isinstance(node.target, ast.Name):
            raise Unsupported("for ... else, or a for loop over tuples")
        value = self.temporary("v")
        body = [self._assign_name(node.target.id, _name(value)), *self.block(node.body)]
        loop = ast.For(_name(value, load=False), _r("iterate", self.expr(node.iter)), body, [])
        return self._loop(loop)

    def _While(self, node):
        if node.orelse:
            raise Unsupported("while ... else")
        loop = ast.While(_r("loop_test", self.expressions.test(node.test)), self.block(node.body), [])
        return self._loop(loop)

    def _Break(self, node):
        return [ast.Expr(_r("jump")), ast.Break()]

    def _Continue(self, node):
        return [ast.Expr(_r("jump")), ast.Continue()]

    def _Return(self, node):
        value = self.expr(node.value) if node.value is not None else ast.Constant(None)
        held = self.temporary("r")
        return [ast.Assign([_name(held, load=False)], value),
                ast.If(_r("ret", _name(held)), [ast.Return(_r("retval", _name(held)))], [])]

    def _Assert(self, node):
        return [ast.Expr(_r("check", self.expressions.test(node.test)))]

    def _Raise(self, node):
        return [ast.Expr(_r("bail", ast.Constant("the kernel raises")))]


def _stored_names(function):
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    every = function.args
    params = {a.arg for a in every.posonlyargs + every.args + every.kwonlyargs}
    return sorted(names - params)


def vector_code(code):
    """(code object of the vector version of the kernel `code`, None) or (None, reason)."""
    if code not in _cache:
        try:
            _cache[code] = (_compile(code), None)
        except Unsupported as why:
            _cache[code] = (None, f"the kernel uses {why}")
        except (OSError, TypeError, SyntaxError):
            _cache[code] = (None, "the kernel's source is not available")
    return _cache[code]


def _compile(code):
    lines, first = source_lines(code)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise Unsupported("source that is not one function")
    function = tree.body[0]
    function.decorator_list = []
    args = function.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise Unsupported("*args, **kwargs or keyword-only parameters")
    if not _same_code(code, function, first):
        raise Unsupported("a kernel whose source file changed since it was defined")
    statements = _Statements()
    body = statements.block(function.body)
    prologue = [ast.Assign([_name(n, load=False)], ast.Attribute(_name(_R), "UNDEF", ast.Load()))
                for n in _stored_names(function)]
    function.body = prologue + body
    args.args.insert(0, ast.arg(_R))
    module = ast.Module([_closure(function, code.co_freevars)], [])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, first - 1)
    compiled = compile(module, code.co_filename, "exec")
    found = [c for c in _codes(compiled) if c.co_name == code.co_name]
    if len(found) != 1:
        raise Unsupported("a kernel the vector engine could not rebuild")
    return found[0]


def _closure(function, freevars):
    """Wrap `function` in a function that binds the closure's names, so that they stay free variables."""
    if not freevars:
        return function
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    body = [ast.Assign([_name(v, load=False)], ast.Constant(None)) for v in freevars] + [function]
    return ast.FunctionDef("_gpusim_closure", arguments, body, [], None, None)


def _same_code(code, function, first):
    """Does the source still compile to the code Python runs (same names, variables and lines)?"""
    module = ast.fix_missing_locations(ast.Module([_closure(copy.deepcopy(function), code.co_freevars)], []))
    ast.increment_lineno(module, first - 1)
    compiled = compile(module, code.co_filename, "exec")
    found = [c for c in _codes(compiled) if c.co_name == code.co_name]
    same = ("co_names", "co_varnames", "co_freevars", "co_argcount", "co_consts")
    return (len(found) == 1 and all(getattr(found[0], a) == getattr(code, a) for a in same)
            and _lines(found[0]) == _lines(code))


def _lines(code):
    """The lines of a function's instructions, but for its first (`@cuda.jit` or `def`)."""
    skip = (None, code.co_firstlineno)
    return {line for c in _codes(code) for _, _, line in c.co_lines() if line not in skip}


def _codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)
