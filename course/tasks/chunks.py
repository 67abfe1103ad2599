"""Inputs read a chunk at a time: the plain-Python exercises of Parts 6 (online softmax) and 7 (FlashAttention
in NumPy) receive their long inputs as :class:`ChunkedReader` s, which hand out at most a chunk of rows per
read and count the rows read, so that the check can tell a streaming method from one that uses the input
whole. A Task names these inputs in ``Task.chunked``; :func:`course.tasks.common.run_function` wraps them.
"""

from __future__ import annotations

import numpy as np


class ChunkReadError(Exception):
    """The learner's function read an input in a way the exercise rules out (all of it at once, or too much
    at a time)."""


_BLANK_LIKE = {np.empty_like, np.zeros_like, np.ones_like, np.full_like}  # they read the shape, no values


class ChunkedReader:
    """An input that can only be read a chunk at a time, as a stream delivers it: ``x[start:start + chunk]``
    (or one element, or ``for v in x``) reads at most ``chunk`` rows (elements of a vector), handed out as a
    fresh NumPy array; ``len(x)``, ``x.shape``, ``x.size``, ``x.ndim`` and ``x.dtype`` work, and
    ``np.empty_like(x)`` (and zeros_like, ...) make an array of its shape. The rows of each read are counted
    in ``reads``; anything that would use the input whole (``x.max()``, ``np.exp(x)``, ``x - m``, ``k.T``,
    ``np.asarray(x)``) raises :class:`ChunkReadError`. ``name`` and ``limit`` name the input and the size in
    the messages (``"x"``, ``"chunk"``; ``"k"``, ``"tile_k"``).

    In a notebook the reader holds the data, so code set on cheating can reach it; this catches the honest
    mistakes. In classroom grading ``data`` is a stand-in that asks the grader for each chunk
    (:mod:`course.grade.serving`): the data stays with the grader, which counts the rows it hands out itself.
    """

    def __init__(self, data: np.ndarray, chunk: int, name: str = "x", limit: str = "chunk"):
        self._data, self._chunk, self._name, self._limit = data, chunk, name, limit
        self._unit = "elements" if data.ndim == 1 else "rows"
        self.reads: list[int] = []
        self._probe: StateProbe | None = None  # watches what the reading function keeps between chunks

    def __len__(self) -> int:
        return self._data.shape[0]

    shape = property(lambda self: self._data.shape)
    size = property(lambda self: self._data.size)
    ndim = property(lambda self: self._data.ndim)
    dtype = property(lambda self: self._data.dtype)

    def __getitem__(self, key):
        first = key[0] if isinstance(key, tuple) and key else key
        rows = _rows(first, len(self))
        if rows > self._chunk:
            raise ChunkReadError(
                f"{self._name}[{_key_text(key)}] reads {rows} {self._unit} at once, but this exercise reads "
                f"{self._name} in pieces of at most {self._limit} = {self._chunk} {self._unit}: "
                f"{self._name}[start:start + {self._limit}].")
        if self._probe is not None:
            self._probe.look()
        part = self._data[key]
        self.reads.append(rows)
        return part.copy() if isinstance(part, np.ndarray) else part

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def _whole(self, what: str):
        raise ChunkReadError(f"{what} uses all of {self._name} at once, but this exercise reads {self._name} "
                             f"only in pieces of at most {self._limit} = {self._chunk} {self._unit}: "
                             f"{self._name}[start:start + {self._limit}].")

    def __array__(self, dtype=None, copy=None):
        self._whole(f"turning {self._name} into an array (np.asarray({self._name}), np.exp({self._name}), "
                    f"{self._name} - m, ...)")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self._whole(f"np.{ufunc.__name__}{'' if method == '__call__' else '.' + method}({self._name})")

    def __array_function__(self, func, types, args, kwargs):
        if func in _BLANK_LIKE and args and args[0] is self:
            return func(np.empty(self.shape, self.dtype), *args[1:], **kwargs)
        self._whole(f"np.{func.__name__}({self._name})")

    def __getattr__(self, name):
        if name.startswith("_"):  # Python's and IPython's own probes
            raise AttributeError(name)
        self._whole(f"{self._name}.{name}")

    def _operator(self, *other):
        self._whole(f"arithmetic or a comparison on {self._name} itself")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _operator
    __pow__ = __rpow__ = __neg__ = __lt__ = __le__ = __gt__ = __ge__ = __matmul__ = __rmatmul__ = _operator


def _rows(first, length: int) -> int:
    """How many rows of an input of ``length`` rows the first part of an index picks."""
    if first is Ellipsis:
        return length
    if isinstance(first, slice):
        return len(range(*first.indices(length)))
    if isinstance(first, (int, np.integer)) and not isinstance(first, bool):
        return 1
    return int(np.size(np.arange(length)[first]))


def _key_text(key) -> str:
    if isinstance(key, tuple):
        return ", ".join(_key_text(part) for part in key)
    if isinstance(key, slice):
        return ":".join("" if v is None else str(v) for v in (key.start, key.stop)) + \
            ("" if key.step is None else f":{key.step}")
    return "..." if key is Ellipsis else str(key)


# --------------------------------------------------------------------------- the state kept between chunks

MAX_WALKED = 100_000  # items of a list or dict looked at, at most (enough to tell a list per chunk)


class StateProbe:
    """What a plain-Python function keeps between the chunks it reads: at every read of a
    :class:`ChunkedReader` it is attached to, the floating-point numbers held by the function's frames (its
    locals, and those of the helpers it called on the way to the read), counted through arrays, NumPy and
    Python scalars, lists, tuples and dicts. Arrays the function was given or is allowed to keep whole
    (``allowed``: e.g. the output, one array of the input's length) are not counted; NumPy float64 values
    are listed by name, where the task's arithmetic is float32.

    The probe runs in the process that runs the function: in classroom grading, the learner's. Like the
    memory check of Part 7, it catches the honest mistakes (a list of every chunk's maximum), not code set
    on hiding from it."""

    def __init__(self, allowed: tuple[tuple[int, ...], ...] = (), given=()):
        self.allowed, self.given = allowed, {id(value) for value in given}
        self.most = 0  # the most numbers held at one read
        self.where = ""  # what held them then, e.g. "maxima: 512 numbers"
        self.float64: dict[str, str] = {}  # name -> what it is, for NumPy float64 values held
        self._top = None

    def run(self, function, *args):
        """Call ``function(*args)``, watching every ChunkedReader among the arguments."""
        import sys

        readers = [arg for arg in args if isinstance(arg, ChunkedReader)]
        for reader in readers:
            reader._probe = self
        self._top = sys._getframe()
        try:
            return function(*args)
        finally:
            for reader in readers:
                reader._probe = None

    def look(self) -> None:
        """Count what the function's frames hold now (called by a reader, before it hands out a chunk)."""
        import sys

        frame, counted, allowed = sys._getframe(1), {}, list(self.allowed)
        seen: set[int] = set(self.given)
        while frame is not None and frame is not self._top:
            if frame.f_code.co_filename != __file__:
                for name, value in frame.f_locals.items():
                    count = self._count(name, value, seen, allowed, 0)
                    if count:
                        counted[name] = counted.get(name, 0) + count
            frame = frame.f_back
        total = sum(counted.values())
        if total > self.most:
            self.most = total
            largest = sorted(counted.items(), key=lambda item: -item[1])[:3]
            self.where = ", ".join(f"`{name}` {count}" for name, count in largest)

    def _count(self, name: str, value, seen: set, allowed: list, depth: int) -> int:
        if id(value) in seen or isinstance(value, ChunkedReader):
            return 0
        if isinstance(value, np.ndarray):
            base = value
            while isinstance(base.base, np.ndarray):
                base = base.base
            if id(base) in seen or not np.issubdtype(base.dtype, np.floating):
                return 0
            seen.add(id(base))
            if base.dtype == np.float64:
                self.float64.setdefault(name, f"a float64 array of shape {base.shape}")
            if base.shape in allowed:
                allowed.remove(base.shape)
                return 0
            return int(base.size)
        if isinstance(value, np.floating):
            if value.dtype == np.float64:
                self.float64.setdefault(name, "a NumPy float64 number")
            return 1
        if isinstance(value, float):
            return 1
        if depth < 3 and isinstance(value, (list, tuple, dict, set)):
            seen.add(id(value))
            items = value.values() if isinstance(value, dict) else value
            total = 0
            for index, item in enumerate(items):
                if index >= MAX_WALKED:
                    break
                total += self._count(name, item, seen, allowed, depth + 1)
            return total
        return 0


def float64_message(name: str, probe: StateProbe, returned: dict) -> str | None:
    """The complaint about NumPy float64 values a float32 task's function held at its reads (``probe``) or
    returned (``returned``: name -> value), or None."""
    wide = [f"`{key}` ({why})" for key, why in probe.float64.items()]
    wide += [f"the returned `{key}` ({np.asarray(value).dtype})" for key, value in returned.items()
             if np.asarray(value).dtype != np.float32]
    if not wide:
        return None
    return (f"{name} gives the right values, but it computes in float64, where the task is float32: "
            f"{', '.join(wide[:4])}. Float64 NumPy values are twice the memory and, on most GPUs, 2 to 64 "
            f"times slower to compute with.\nHint: make every array and number float32: np.float32(-np.inf), "
            f"np.zeros(rows, dtype=np.float32), np.float32(scale) (a NumPy float64 scalar, np.float64(...) "
            f"or an array made with dtype=np.float64, turns every result it touches into float64).")
