"""Run a Triton kernel under Triton's interpreter and watch every load and store it makes.

With ``TRITON_INTERPRET=1`` (set before triton is first imported) a ``@triton.jit`` kernel runs on the CPU,
one program after the other, each ``tl.load`` / ``tl.store`` reading or writing raw memory at the addresses
the kernel computed. A GPU would read whatever lies past the end of an array (or fault); the interpreter
does the same, silently. :func:`run` wraps the interpreter's memory operations so that every address a lane
uses (the lanes its mask lets through) must fall inside one of the kernel's array arguments, and counts the
elements each program loads and stores:

    counts = run(kernel, grid, {"x": x, "out": out, "n": n}, {"BLOCK": 128})

An access outside the arrays raises :class:`OutOfBoundsAccess` *before* the memory is touched, naming the
program, the array, the index and the kernel line. Tensors made by :func:`guarded` have a margin of NaNs
before and after them, so that an index a little past the end lands in that margin and is reported as an
index of the right array, never as an element of a neighbouring one.
"""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from gpusim import describe_line

GUARD_ELEMENTS = 4096  # margin on each side of a guarded tensor


class OutOfBoundsAccess(Exception):
    """A lane of a Triton program loaded or stored outside every array the kernel was given."""


class TritonKernelError(Exception):
    """The kernel raised an error under the interpreter (the message names the kernel line)."""


@dataclass
class Counts:
    """What one launch did: tl.load / tl.store calls and the elements they moved, per array."""

    programs: int = 0
    load_calls: int = 0
    store_calls: int = 0
    max_program_load_calls: int = 0  # tl.load calls of the busiest program
    loaded: Counter = field(default_factory=Counter)  # array name -> elements loaded (masked-off lanes not)
    stored: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {"programs": self.programs, "load_calls": self.load_calls, "store_calls": self.store_calls,
                "max_program_load_calls": self.max_program_load_calls, "loaded": dict(self.loaded),
                "stored": dict(self.stored)}


def guarded(array, dtype=None):
    """A torch tensor holding `array`'s values, inside a larger allocation whose margins hold NaN (or -1 for
    integers). 2-D arrays keep their shape; their rows may be padded (see :func:`guarded_rows`)."""
    import torch

    values = torch.as_tensor(np.array(array, order="C"), dtype=dtype)  # a copy: the input may be read-only
    flat = values.reshape(-1)
    fill = float("nan") if values.dtype.is_floating_point else -1
    buffer = torch.full((flat.numel() + 2 * GUARD_ELEMENTS,), fill, dtype=values.dtype)
    buffer[GUARD_ELEMENTS:GUARD_ELEMENTS + flat.numel()] = flat
    return buffer[GUARD_ELEMENTS:GUARD_ELEMENTS + flat.numel()].view(values.shape)


def guarded_rows(matrix, row_stride: int):
    """A 2-D guarded tensor whose rows are `row_stride` elements apart (>= its columns): a slice of a wider
    matrix, as x[:, :cols] is. Reading past the end of a row lands in the padding and is reported."""
    import torch

    matrix = torch.as_tensor(np.array(matrix, order="C"))  # a copy: the input may be read-only
    rows, cols = matrix.shape
    wide = torch.full((rows, row_stride), float("nan"), dtype=matrix.dtype)
    wide[:, :cols] = matrix
    return guarded(wide.numpy())[:, :cols]


@dataclass(frozen=True)
class _Region:
    name: str
    base: int  # address of element [0, 0, ...]
    itemsize: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements, decreasing (row-major views)
    start: int  # the whole allocation, margins included
    end: int

    @classmethod
    def of(cls, name, tensor) -> _Region:
        storage = tensor.untyped_storage()
        start = storage.data_ptr()
        return cls(name, tensor.data_ptr(), tensor.element_size(), tuple(tensor.shape),
                   tuple(tensor.stride()), start, start + storage.nbytes())

    def index(self, address: int) -> tuple[int, ...] | None:
        """The index of `address` in this array's index space (possibly out of range), None if misaligned."""
        offset, rest = divmod(address - self.base, self.itemsize)
        if rest:
            return None
        index = []
        for stride in self.strides:
            step = offset // stride if stride else 0
            index.append(step)
            offset -= step * stride
        return tuple(index)

    def valid(self, addresses: np.ndarray) -> np.ndarray:
        """Which addresses (int64 array) are elements of this array."""
        offset = addresses - self.base
        ok = (offset % self.itemsize) == 0
        offset = offset // self.itemsize
        for stride, size in zip(self.strides, self.shape, strict=True):
            step = offset // stride if stride else np.zeros_like(offset)
            ok &= (step >= 0) & (step < size)
            offset = offset - step * stride
        return ok & (offset == 0)


class _Watch:
    """The interpreter's memory operations, wrapped: bounds checked and counted."""

    def __init__(self, kernel_name: str, filename: str, regions: list[_Region]):
        self.kernel_name, self.filename, self.regions = kernel_name, filename, regions
        self.counts = Counts()
        self.program_calls: Counter = Counter()

    def access(self, kind: str, pointers, mask) -> None:
        from triton.runtime.interpreter import interpreter_builder

        program = tuple(interpreter_builder.grid_idx)
        if kind == "load":
            self.counts.load_calls += 1
            self.program_calls[program] += 1
        else:
            self.counts.store_calls += 1
        addresses = np.asarray(pointers.data).astype(np.int64)
        active = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape) if mask is not None \
            else np.ones(addresses.shape, dtype=bool)
        lanes = addresses[active]
        unexplained = np.ones(lanes.shape, dtype=bool)
        for region in self.regions:
            inside = (lanes >= region.start) & (lanes < region.end)
            if not inside.any():
                continue
            good = region.valid(lanes[inside])
            if not good.all():
                self._raise(kind, program, region, int(lanes[inside][~good][0]), int((~good).sum()))
            (self.counts.loaded if kind == "load" else self.counts.stored)[region.name] += int(inside.sum())
            unexplained &= ~inside
        if unexplained.any():
            self._raise(kind, program, None, int(lanes[unexplained][0]), int(unexplained.sum()))

    def _raise(self, kind, program, region, address, count):
        verb = "read" if kind == "load" else "wrote"
        where = self.line()
        grid = f"program {program[0]}" if program[1:] == (0, 0) else f"program {program}"
        lanes = f"{count} lane{'s' if count > 1 else ''} of this tl.{kind}"
        if region is None:
            nearest = min(self.regions, key=lambda r: min(abs(address - r.start), abs(address - r.end)))
            raise OutOfBoundsAccess(f"{grid} of {self.kernel_name} {verb} memory outside every array it was "
                                    f"given ({lanes}; the nearest array is `{nearest.name}`){where}.")
        index = region.index(address)
        shown = ", ".join(str(i) for i in index) if index is not None else "?"
        what = _past(region, index) if index is not None else "an address between two elements"
        raise OutOfBoundsAccess(f"{grid} of {self.kernel_name} {verb} {region.name}[{shown}], but "
                                f"`{region.name}` has shape {region.shape}: {what} ({lanes}){where}.")

    def line(self) -> str:
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != self.filename:
            frame = frame.f_back
        return f", at {describe_line(self.filename, frame.f_lineno)}" if frame is not None else ""


def _past(region: _Region, index: tuple[int, ...]) -> str:
    if len(index) == 1:
        return "index -1 is before the first element" if index[0] < 0 else \
            f"the last valid index is {region.shape[0] - 1}"
    for axis, (i, size) in enumerate(zip(index, region.shape, strict=True)):
        if not 0 <= i < size:
            if axis == len(index) - 1:
                return f"row {index[0]} has only {size} columns" if i >= size else "a column before the first"
            return f"axis {axis} has only {size} entries"
    return "an element outside the array"


@contextmanager
def _watching(watch: _Watch):
    from triton.runtime.interpreter import interpreter_builder as builder

    originals = {name: getattr(builder, name) for name in
                 ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas")}

    def masked_load(ptrs, mask, other, cache_policy, is_volatile):
        watch.access("load", ptrs, mask)
        return originals["create_masked_load"](ptrs, mask, other, cache_policy, is_volatile)

    def masked_store(ptrs, value, mask, cache_policy):
        watch.access("store", ptrs, mask)
        return originals["create_masked_store"](ptrs, value, mask, cache_policy)

    def atomic_rmw(op, ptr, val, mask, sem, scope):
        watch.access("store", ptr, mask)
        return originals["create_atomic_rmw"](op, ptr, val, mask, sem, scope)

    def atomic_cas(ptr, cmp, val, sem, scope):
        watch.access("store", ptr, None)
        return originals["create_atomic_cas"](ptr, cmp, val, sem, scope)

    builder.create_masked_load, builder.create_masked_store = masked_load, masked_store
    builder.create_atomic_rmw, builder.create_atomic_cas = atomic_rmw, atomic_cas
    try:
        yield
    finally:
        for name in originals:
            vars(builder).pop(name, None)


def python_function(kernel):
    """The Python function behind a @triton.jit kernel (interpreted or not), or the function itself."""
    return getattr(kernel, "fn", kernel)


def interpreted(kernel):
    """The kernel as the interpreter runs it. With a GPU, TRITON_INTERPRET is off and @triton.jit compiles
    for the GPU; the watch needs the interpreter all the same, so the kernel's Python function is wrapped
    again."""
    from triton.runtime.interpreter import InterpretedFunction

    return kernel if isinstance(kernel, InterpretedFunction) else InterpretedFunction(python_function(kernel))


def run(kernel, grid: tuple[int, ...], args: dict, constexprs: dict) -> Counts:
    """Launch ``kernel[grid](*args.values(), **constexprs)`` under the interpreter with every access checked.
    Tensors in `args` are the arrays the kernel may touch. Raises OutOfBoundsAccess, or TritonKernelError
    for any other error inside the kernel."""
    import torch

    function = python_function(kernel)
    regions = [_Region.of(name, value) for name, value in args.items() if isinstance(value, torch.Tensor)]
    watch = _Watch(function.__name__, function.__code__.co_filename, regions)
    try:
        with _watching(watch):
            interpreted(kernel)[grid](*args.values(), **constexprs)
    except Exception as error:  # noqa: BLE001 (the interpreter wraps whatever the kernel raised)
        cause = _root(error)
        if isinstance(cause, OutOfBoundsAccess):
            raise cause from None
        raise TritonKernelError(_describe(cause, function)) from None
    watch.counts.programs = int(np.prod(grid))
    watch.counts.max_program_load_calls = max(watch.program_calls.values(), default=0)
    return watch.counts


def _root(error: BaseException) -> BaseException:
    seen = set()
    while (error.__cause__ or error.__context__) is not None and id(error) not in seen:
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return error


def _describe(error: BaseException, function) -> str:
    tb, line = error.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == function.__code__.co_filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    where = f" at {describe_line(function.__code__.co_filename, line)}" if line else ""
    return f"{type(error).__name__}{where}: {error}"
