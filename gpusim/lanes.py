"""Per-thread values of the vector engine (gpusim.wave): one NumPy array over the lanes of a wave.

A lane's value is a Python int, float or bool (`py=True`: the array is int64, float64 or bool) or a NumPy
scalar of the array's dtype (`py=False`). Every operation gives, lane by lane, what Python and NumPy give on
the scalars (NEP 50: Python scalars are weak), or raises Bail: the launch then reruns on the thread engine.
Lanes outside the active mask hold values that are never looked at.
"""

import builtins
import math
import operator

import numpy as np

from .gpumath import BUILTINS, math_module


class Bail(Exception):
    """The vector engine cannot run this exactly; the launch reruns on the per-thread engine."""


class _Context:
    """The active lanes (a bool array, or None for all), set by the wave that runs."""

    mask = None


ctx = _Context()
_INT53 = 2**53
_INT62 = 2**62
_WEAK = {"b": False, "i": 0, "f": 0.0}
_PY_DTYPE = {"b": np.dtype(bool), "i": np.dtype(np.int64), "f": np.dtype(np.float64)}


def _active(array):
    """`array` restricted to the active lanes."""
    return array if ctx.mask is None else array[ctx.mask]


class Lanes:
    """One value per lane; see the module docstring."""

    __slots__ = ("a", "py", "undef")
    __array_ufunc__ = None  # NumPy scalars and arrays hand their operators over to ours
    __hash__ = None

    def __init__(self, array, py, undef=None):
        self.a = array
        self.py = py
        self.undef = undef  # lanes where a variable was never assigned (None: none)

    def __repr__(self):
        kind = "python" if self.py else "numpy"
        return f"<lanes {kind} {self.a.dtype} {self.a[:8]}...>"

    def _refuse(self, *args):
        raise Bail("a per-thread value used where one value is needed (a branch, an index of a list, ...)")

    __bool__ = __index__ = __int__ = __float__ = __iter__ = __len__ = __complex__ = _refuse

    def __getattr__(self, name):
        raise Bail(f"attribute {name} of a per-thread value")


class Mixed:
    """A value whose type differs between lanes (`x = a[i] if i < n else 0.0`): parts of (lanes, Lanes).
    It can be stored into an array, and used wherever every active lane holds one part."""

    __slots__ = ("parts",)
    __array_ufunc__ = None
    __hash__ = None

    def __init__(self, parts):
        self.parts = parts

    def resolve(self):
        """The part that holds every active lane, or Bail."""
        mask = ctx.mask
        for lanes, value in self.parts:
            if (lanes.all() if mask is None else not (mask & ~lanes).any()):
                return value
        raise Bail("a value whose type differs between the active lanes")

    def each(self, function):
        """`function` of each part on its own active lanes, the results put together."""
        mask = ctx.mask
        live = [(lanes if mask is None else lanes & mask, value) for lanes, value in self.parts]
        live = [(lanes, value) for lanes, value in live if lanes.any()]
        if len(live) <= 1:
            return function(live[0][1] if live else self.parts[0][1])
        n = len(live[0][0])
        result = None
        try:
            for lanes, value in live:
                ctx.mask = lanes
                value = function(value)
                result = value if result is None else mix(lanes, value, result, n)
        finally:
            ctx.mask = mask
        return result

    __bool__ = __index__ = __int__ = __float__ = __iter__ = __len__ = Lanes._refuse


def mix(mask, new, old, n):
    """`new` on the lanes of `mask`, `old` on the others, whatever their types."""
    parts = []
    for lanes, value in ((mask, new), (~mask, old)):
        pieces = value.parts if type(value) is Mixed else [(np.ones(n, dtype=bool), value)]
        for where, piece in pieces:
            where = where & lanes
            if not where.any():
                continue
            piece = piece if type(piece) is Lanes else Lanes(broadcast(piece, n), _type_of(piece)[0] == "py")
            for k, (other_where, other) in enumerate(parts):
                if same_type(other, piece):
                    parts[k] = (other_where | where, Lanes(np.where(where, piece.a, other.a), other.py))
                    break
            else:
                parts.append((where, piece))
    if len(parts) == 1:
        return parts[0][1]
    return Mixed(parts)


def _split(x):
    """(values, py, kind) of an operand: Lanes, Python scalar or NumPy scalar."""
    if type(x) is Mixed:
        x = x.resolve()
    if type(x) is Lanes:
        if x.undef is not None and (_active(x.undef)).any():
            raise Bail("a variable read before every lane assigned it")
        return x.a, x.py, x.a.dtype.kind
    if type(x) is bool:
        return x, True, "b"
    if type(x) is int:
        if not -_INT62 < x < _INT62:
            raise Bail("a Python int beyond 64 bits")
        return x, True, "i"
    if type(x) is float:
        return x, True, "f"
    if isinstance(x, np.generic) and x.dtype.kind in "biuf":
        return x, False, x.dtype.kind
    raise Bail(f"a value of type {type(x).__name__}")


def _maxabs(values):
    if isinstance(values, np.ndarray):
        active = _active(values)
        return max(-int(active.min()), int(active.max())) if active.size else 0  # np.abs(-2**63) < 0
    return abs(int(values))


def _nonzero(values):
    """Bail unless every active divisor is non-zero (Python raises ZeroDivisionError)."""
    if isinstance(values, np.ndarray):
        if (_active(values) == 0).any():
            raise Bail("division by zero")
    elif values == 0:
        raise Bail("division by zero")


def _as_py_array(values, kind):
    return values.astype(np.int64) if kind == "b" else values


_ARITH = {
    operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
    operator.truediv: np.true_divide, operator.floordiv: np.floor_divide, operator.mod: np.remainder,
}
_BITS = {operator.and_: np.bitwise_and, operator.or_: np.bitwise_or, operator.xor: np.bitwise_xor}
_COMPARE = {operator.lt: np.less, operator.le: np.less_equal, operator.eq: np.equal,
            operator.ne: np.not_equal, operator.gt: np.greater, operator.ge: np.greater_equal}
_DIVIDE = (operator.truediv, operator.floordiv, operator.mod)


def _both_python(op, xa, xk, ya, yk):
    """Python semantics for two Python-scalar operands (int64/float64/bool arrays or scalars)."""
    if op in _COMPARE:
        ints = [_maxabs(v) for v, k in ((xa, xk), (ya, yk)) if k != "f"]
        if "f" in (xk, yk) and max(ints, default=0) > _INT53:
            raise Bail("an int too large to compare with a float exactly")
        return Lanes(np.asarray(_COMPARE[op](xa, ya)), True)
    if op in _BITS:
        if "f" in (xk, yk):
            raise Bail("a bitwise operator on a float")
        if xk == yk == "b":
            return Lanes(np.asarray(_BITS[op](xa, ya)), True)
        xa, ya = _as_py_array(np.asarray(xa), xk), _as_py_array(np.asarray(ya), yk)
        return Lanes(np.asarray(_BITS[op](xa, ya)), True)
    ufunc = _ARITH.get(op)
    if ufunc is None:
        raise Bail("an operator the vector engine leaves to the thread engine")
    if op in _DIVIDE:
        _nonzero(ya)
    floats = "f" in (xk, yk)
    if not floats:
        if op is operator.truediv:
            if max(_maxabs(xa), _maxabs(ya)) > _INT53:
                raise Bail("an int too large to divide exactly")
        elif op is operator.mul:
            if _maxabs(xa) * _maxabs(ya) >= _INT62:
                raise Bail("an int product beyond 64 bits")
        elif max(_maxabs(xa), _maxabs(ya)) >= _INT62:
            raise Bail("an int beyond 62 bits")
        xa = _as_py_array(np.asarray(xa), xk)
        ya = _as_py_array(np.asarray(ya), yk)
    else:
        for values, kind in ((xa, xk), (ya, yk)):
            if kind != "f" and _maxabs(values) > _INT53:
                raise Bail("an int too large to convert to float exactly")
        xa = np.asarray(xa, dtype=np.float64)
        ya = np.asarray(ya, dtype=np.float64)
    return Lanes(np.asarray(ufunc(xa, ya)), True)


def _weak_to(values, kind, dtype, compare):
    """A Python-scalar array cast as NumPy casts a weak Python scalar meeting `dtype`."""
    if compare and kind == "i" and dtype.kind in "iub":
        if dtype == np.uint64:
            raise Bail("uint64 against a Python int")
        return values, np.int64
    target = np.result_type(dtype, _WEAK[kind])
    if kind == "i" and target.kind in "iu":
        info = np.iinfo(target)
        active = _active(values)
        if active.size and (active.min() < info.min or active.max() > info.max):
            raise Bail("a Python int out of range for the NumPy type")
    return values.astype(target), None


def binop(op, x, y):
    """`op(x, y)` lane by lane, where x or y is Lanes."""
    if type(y) is Mixed:
        return y.each(lambda value: binop(op, x, value))
    xa, xp, xk = _split(x)
    ya, yp, yk = _split(y)
    if xp and yp:
        return _both_python(op, xa, xk, ya, yk)
    ufunc = _COMPARE.get(op) or _ARITH.get(op) or _BITS.get(op)
    if ufunc is None:
        return call(op, x, y)
    if xp and isinstance(xa, np.ndarray):  # a weak array meets a strong operand
        strong = ya.dtype if isinstance(ya, np.ndarray) else ya.dtype
        xa, wide = _weak_to(xa, xk, strong, op in _COMPARE)
        if wide is not None:
            ya = np.asarray(ya).astype(wide)
    elif yp and isinstance(ya, np.ndarray):
        strong = xa.dtype
        ya, wide = _weak_to(ya, yk, strong, op in _COMPARE)
        if wide is not None:
            xa = np.asarray(xa).astype(wide)
    with np.errstate(all="ignore"):
        out = ufunc(xa, ya)
    if not isinstance(out, np.ndarray):
        raise Bail("an operation that gave no array")
    return Lanes(out, False)


_UNARY = {operator.neg: np.negative, operator.pos: np.positive, operator.invert: np.invert}


def _unary(op, x):
    xa, xp, xk = _split(x)
    if xp:
        if xk == "f" and op is operator.invert:
            raise Bail("~ on a float")
        if xk == "i" and _maxabs(xa) >= _INT62:
            raise Bail("an int beyond 62 bits")
        xa = _as_py_array(xa, xk)
        if op is operator.pos and xk == "b":
            return Lanes(xa, True)
        return Lanes(_UNARY[op](xa), True)
    if xk == "b" and op is not operator.invert:
        raise Bail("- or + on a NumPy bool")
    with np.errstate(all="ignore"):
        return Lanes(_UNARY[op](xa), False)


def _binary(op):
    return lambda self, other: binop(op, self, other), lambda self, other: binop(op, other, self)


for _name, _op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv), ("mod", operator.mod),
                   ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor)):
    _forward, _reflected = _binary(_op)
    setattr(Lanes, f"__{_name}__", _forward)
    setattr(Lanes, f"__r{_name}__", _reflected)
for _name, _op in (("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
                   ("eq", operator.eq), ("ne", operator.ne)):
    setattr(Lanes, f"__{_name}__", _binary(_op)[0])


def _part_by_part(name):
    return lambda self, *other: self.each(lambda value: getattr(value, name)(*other))


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
              "rshift"):
    setattr(Mixed, f"__{_name}__", _part_by_part(f"__{_name}__"))
    setattr(Mixed, f"__r{_name}__", _part_by_part(f"__r{_name}__"))
for _name in ("lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "invert"):
    setattr(Mixed, f"__{_name}__", _part_by_part(f"__{_name}__"))
Lanes.__neg__ = lambda self: _unary(operator.neg, self)
Lanes.__pos__ = lambda self: _unary(operator.pos, self)
Lanes.__invert__ = lambda self: _unary(operator.invert, self)


def truth(x):
    """Per-lane truth values (a bool array) of Lanes (or Mixed)."""
    if type(x) is Mixed:
        out = np.zeros(len(x.parts[0][0]), dtype=bool)
        for lanes, value in x.parts:
            out[lanes] = truth(value)[lanes]
        return out
    values, _, kind = _split(x)
    return values if kind == "b" else values != 0


def same_type(x, y):
    """Do two values have one type on every lane (for merging them)?"""
    if type(x) is Lanes and type(y) is Lanes:
        return x.py == y.py and x.a.dtype == y.a.dtype
    tx = _type_of(x)
    return tx is not None and tx == _type_of(y)


def _type_of(x):
    if type(x) is Lanes:
        return ("py", x.a.dtype.kind) if x.py else ("np", x.a.dtype)
    if type(x) in (bool, int, float):
        return "py", {bool: "b", int: "i", float: "f"}[type(x)]
    if isinstance(x, np.generic):
        return "np", x.dtype
    return None


def broadcast(x, n):
    """The per-lane array of a value (Lanes or scalar) over n lanes."""
    if type(x) is Lanes:
        return x.a
    kind = _type_of(x)
    if kind is None:
        raise Bail(f"a value of type {type(x).__name__} that differs between lanes")
    dtype = _PY_DTYPE[kind[1]] if kind[0] == "py" else kind[1]
    if kind == ("py", "i") and not -_INT62 < x < _INT62:
        raise Bail("a Python int beyond 64 bits")
    return np.full(n, x, dtype=dtype)


def like(x, values):
    """Lanes of `values` with the type of `x` (Lanes or scalar)."""
    kind = _type_of(x)
    return Lanes(values, kind[0] == "py")


def from_scalars(values):
    """Lanes holding one scalar per lane (all of one type)."""
    types = {type(v) for v in values}
    if len(types) != 1:
        raise Bail("lanes of different types")
    kind = _type_of(values[0])
    if kind is None:
        raise Bail(f"a value of type {type(values[0]).__name__}")
    dtype = _PY_DTYPE[kind[1]] if kind[0] == "py" else kind[1]
    try:
        return Lanes(np.array(values, dtype=dtype), kind[0] == "py")
    except OverflowError:
        raise Bail("a Python int beyond 64 bits") from None


def to_scalars(x, n=None):
    """The per-lane scalars of Lanes (Python or NumPy scalars), or [x] * n for a uniform scalar."""
    if type(x) is not Lanes:
        return [x] * n
    if x.py:
        return x.a.tolist()
    return list(x.a)


def lanewise(function, args, n):
    """`function` applied to each active lane's scalars: exact, one Python call per lane."""
    index = np.arange(n) if ctx.mask is None else np.flatnonzero(ctx.mask)
    if not len(index):  # nothing is active: the value is never used
        return Lanes(np.zeros(n, dtype=np.int64), True)
    columns = []
    for arg in args:
        if type(arg) is Mixed:
            arg = arg.resolve()
        if type(arg) is Lanes:
            _split(arg)
            picked = arg.a[index]
            columns.append(picked.tolist() if arg.py else list(picked))
        else:
            columns.append([arg] * len(index))
    with np.errstate(all="ignore"):
        results = [function(*row) for row in zip(*columns, strict=True)]
    picked = from_scalars(results)
    full = np.zeros(n, dtype=picked.a.dtype)
    full[index] = picked.a
    return Lanes(full, picked.py)


def _lanes_count(args):
    for arg in args:
        if type(arg) is Lanes:
            return len(arg.a)
        if type(arg) is Mixed:
            return len(arg.parts[0][0])
    return None


def _pick(function, x, y, n):
    """min/max of two values the way Python picks: y if y < x (min) else x."""
    if type(x) is Mixed or type(y) is Mixed or not same_type(x, y):
        return lanewise(function, (x, y), n)
    better = truth(binop(operator.lt if function is builtins.min else operator.gt, y, x))
    return like(x, np.where(better, broadcast(y, n), broadcast(x, n)))


def _convert_int(x, n):
    values, py, kind = _split(x)
    if kind == "f":
        active = _active(values)
        if not np.isfinite(active).all() or (np.abs(active) >= _INT62).any():
            raise Bail("int() of a float that is not finite or too large")
        return Lanes(np.trunc(values).astype(np.int64), True)
    if kind == "u" and values.dtype.itemsize == 8:
        raise Bail("int() of uint64")
    return Lanes(values.astype(np.int64), True)


def _convert_float(x, n):
    values, py, kind = _split(x)
    if kind in "iub" and _maxabs(values) > _INT53:
        raise Bail("float() of an int too large to convert exactly")
    return Lanes(values.astype(np.float64), True)


def _numpy_cast(dtype):
    def cast(x, n):
        values, py, kind = _split(x)
        if kind == "f" and dtype.kind != "f":
            return lanewise(dtype.type, (x,), n)
        if kind in "iu" and dtype.kind in "iu":
            info = np.iinfo(dtype)
            active = _active(values)
            if py and active.size and (active.min() < info.min or active.max() > info.max):
                raise Bail("a Python int out of range for the NumPy type")
        if kind in "iu" and dtype.kind == "b":
            return Lanes(values != 0, False)
        with np.errstate(all="ignore"):
            return Lanes(values.astype(dtype), False)

    return cast


_FAST = {
    builtins.int: _convert_int,
    builtins.float: _convert_float,
    builtins.bool: lambda x, n: Lanes(np.asarray(truth(x)), True),
    builtins.abs: lambda x, n: _abs(x),
}
_FAST.update({np.dtype(t).type: _numpy_cast(np.dtype(t)) for t in (
    np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64)})


def _abs(x):
    values, py, kind = _split(x)
    if py:
        if kind == "i" and _maxabs(values) >= _INT62:
            raise Bail("an int beyond 62 bits")
        return Lanes(np.abs(_as_py_array(values, kind)), True)
    if kind == "b":
        raise Bail("abs() of a NumPy bool")
    with np.errstate(all="ignore"):
        return Lanes(np.abs(values), False)


PURE = frozenset(
    {builtins.min, builtins.max, builtins.abs, builtins.int, builtins.float, builtins.bool, builtins.round,
     builtins.divmod, builtins.pow, operator.pow, operator.lshift, operator.rshift, *_FAST}
    | {v for k, v in vars(math_module).items() if callable(v) and not k.startswith("_")}
    | {v for k, v in vars(math).items() if callable(v) and not k.startswith("_")}
    | set(BUILTINS.values())
)


def call(function, *args):
    """A pure scalar function (PURE) applied lane by lane to args (Lanes or scalars)."""
    n = _lanes_count(args)
    if n is None:
        return function(*args)
    for i, arg in enumerate(args):
        if type(arg) is Mixed:
            return arg.each(lambda value, i=i: call(function, *args[:i], value, *args[i + 1:]))
    if function not in PURE:
        raise Bail(f"{getattr(function, '__name__', function)} called on per-thread values")
    if function in (builtins.min, builtins.max) and len(args) >= 2:
        result = args[0]
        for arg in args[1:]:
            result = _pick(function, result, arg, n)
        return result
    fast = _FAST.get(function)
    if fast is not None and len(args) == 1:
        return fast(args[0], n)
    return lanewise(function, args, n)


Lanes.__pow__ = lambda self, other: call(operator.pow, self, other)
Lanes.__rpow__ = lambda self, other: call(operator.pow, other, self)
Lanes.__lshift__ = lambda self, other: call(operator.lshift, self, other)
Lanes.__rlshift__ = lambda self, other: call(operator.lshift, other, self)
Lanes.__rshift__ = lambda self, other: call(operator.rshift, self, other)
Lanes.__rrshift__ = lambda self, other: call(operator.rshift, other, self)
