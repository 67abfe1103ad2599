"""The vector engine: a wave of whole blocks runs the kernel's Python once (gpusim.vectorize), each per-thread
value a gpusim.lanes.Lanes array, with masks where threads part ways.

It must be invisible but for speed: a launch it finishes gives the thread engine's results, counters and
launch figures exactly. Anything it cannot reproduce exactly raises Bail, and the launch reruns on the thread
engine, which then also gives every error message:
- element accesses are checked for bounds here; a launch with an error of any kind is rerun;
- in a checked launch, the accesses of each wave are handed to the checker block by block, epoch by epoch, in
  the thread engine's order (lane after lane), so races, uninitialised reads and counters are the same;
- in an unchecked launch, lanes that touch one element with at least one write inside one epoch (or, for
  global memory, anywhere in the wave) would see another order than the thread engine's: the launch is rerun.
"""

import operator
import time
import types

import numpy as np

from .arrays import KIND_SHIFT, SIZE_SHIFT, TAG_SHIFT, WRITE, DeviceArray
from .context import SimThread
from .fakecuda import WARP_SIZE, Dim3, FakeCuda
from .lanes import PURE, Bail, Lanes, Mixed, ctx, mix, same_type, truth
from .lanes import broadcast as lanes_broadcast
from .lanes import call as lanes_call
from .memory import STATIC_SHARED_LIMIT, c_strides
from .sites import TAG
from .vectorize import vector_code

WAVE_LANES = 8192  # threads per wave (whole blocks; at least one block)
MAX_WAVE_ENTRIES = 1 << 22  # element accesses a wave may hold before it hands over to the checker


class WaveTooLarge(Bail):
    """A wave logged more element accesses than MAX_WAVE_ENTRIES (retry with one block per wave)."""


class _Undefined:
    """A local variable before its first assignment."""

    def _refuse(self, *args):
        raise Bail("a variable read before it was assigned")

    __bool__ = __index__ = __int__ = __float__ = __iter__ = __len__ = __getattr__ = _refuse
    for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
                  "rshift", "lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "invert", "getitem"):
        locals()[f"__{_name}__"] = _refuse
        locals()[f"__r{_name}__"] = _refuse
    __hash__ = None


UNDEF = _Undefined()


def _barrier():
    raise Bail("cuda.syncthreads() outside the vector engine")


def _shared_array(shape, dtype):
    raise Bail("cuda.shared.array outside the vector engine")


def _local_array(shape, dtype):
    raise Bail("cuda.local.array outside the vector engine")


class _VShared:
    array = staticmethod(_shared_array)


class _VLocal:
    array = staticmethod(_local_array)


class VectorCuda(FakeCuda):
    """The `cuda` that vector kernels see: indices are Lanes (or ints where every lane agrees); the calls the
    engine models are markers that Wave.call recognises; anything else (atomics, warp collectives, fences,
    local arrays) makes the engine give up."""

    shared = _VShared
    shared_array = staticmethod(_shared_array)
    local = _VLocal
    local_array = staticmethod(_local_array)
    syncthreads = staticmethod(_barrier)


_REFUSED = frozenset({
    "atomic", "const", "syncthreads_count", "syncthreads_and", "syncthreads_or",
    "syncwarp", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "all_sync",
    "any_sync", "activemask", "match_any_sync", "match_all_sync", "threadfence", "threadfence_block",
    "threadfence_system", "lanemask_lt",
})
def _refuse(name):
    def refused(self):
        raise Bail(f"cuda.{name}")

    return property(refused)


for _refused in _REFUSED:
    setattr(VectorCuda, _refused, _refuse(_refused))


class WaveArray:
    """A global or shared array as the wave sees it: `flat` holds every block's copy of a shared array one
    after another (`block_size` elements apart); global arrays have one copy."""

    __slots__ = ("flat", "shape", "strides", "ndim", "size", "dtype", "block_size", "readonly", "wrap",
                 "element_base", "read_meta", "write_meta", "key", "global_", "per_lane")

    def __init__(self, flat, shape, readonly, wrap, element_base=0, itemsize_meta=0, block_size=0, key=None,
                 per_lane=False):
        self.flat = flat
        self.shape = tuple(shape)
        self.strides = c_strides(self.shape)
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.dtype = flat.dtype
        self.block_size = block_size
        self.readonly = readonly
        self.wrap = wrap  # negative indices wrap (an unchecked launch's plain NumPy arrays)
        self.element_base = element_base
        self.read_meta = itemsize_meta
        self.write_meta = itemsize_meta + (WRITE << KIND_SHIFT)
        self.key = key
        self.global_ = block_size == 0
        self.per_lane = per_lane  # a local array: one copy per thread, not logged

    def __len__(self):
        return self.shape[0]


def wave_array_of(value, key):
    """The WaveArray of a checked DeviceArray or a plain NumPy array (unchecked), else None."""
    if isinstance(value, DeviceArray):
        if value._e0 != 0 or value._st != c_strides(value.shape):
            raise Bail("a view of an array")
        readonly = value.region.readonly
        return WaveArray(value._flat, value.shape, readonly, False, value._kb, value._mr, key=key)
    if isinstance(value, np.ndarray):
        if not value.flags.c_contiguous:
            raise Bail("a non-contiguous array")
        return WaveArray(value.reshape(-1), value.shape, not value.flags.writeable, True, key=key)
    return None


class Wave:
    """The `__R` of a vector kernel: masks, element accesses, barriers and shared arrays of one wave."""

    UNDEF = UNDEF

    def __init__(self, launch, nblocks):
        self.launch = launch
        nt = launch.nthreads
        self.n = n = nt * nblocks
        self.nblocks = nblocks
        self.nt = nt
        self.block_of_lane = np.repeat(np.arange(nblocks), nt)
        self.everyone = np.ones(n, dtype=bool)
        self.mask = self.everyone
        self.alive = self.everyone  # lanes that have not returned from the kernel
        self.scope = self.everyone  # lanes that have not returned from the function running now
        self.frames = []  # device functions being called: gpusim.wave.Call
        self.tag = launch.tag
        self.all_active = True
        self.full = True
        self.stack = []
        self.loops = []
        self.epoch = 0
        self.block_barriers = np.zeros(nblocks, dtype=np.int64)
        self.static_shared = np.zeros(nblocks, dtype=np.int64)
        self.shared = {}
        self.dynamic = None
        self.dynamic_itemsize = 0
        self.offsets = {}
        self.records = []  # checked: (epoch, lanes or None, elements, meta)
        self.entries = 0
        self.touches = {}  # unchecked: key -> [(epoch, lanes or None, flat index, is write)]
        self.deadline = launch.vector_deadline
        self.iterations = 0
        ctx.mask = None

    # --- masks ---------------------------------------------------------------------------

    def _set(self, mask):
        self.mask = mask
        self.all_active = bool(mask.all())
        ctx.mask = None if self.all_active else mask
        self.full = self.all_active or bool((mask == self.scope).all())

    def test(self, value):
        """True or False when every active lane agrees, else the mask of the lanes that take the branch."""
        if type(value) is Mixed:
            value = Lanes(truth(value), True)
        if type(value) is not Lanes:
            return bool(value)
        t = truth(value)
        if self.all_active:
            if t.all():
                return True
            if not t.any():
                return False
            return t
        taken = t & self.mask
        if not taken.any():
            return False
        if (taken == self.mask).all():
            return True
        return taken

    def push(self, taken):
        self.stack.append((self.mask, taken))
        self._set(taken)

    def flip(self):
        outer, taken = self.stack[-1]
        self._set(outer & ~taken & self.scope)

    def pop(self):
        outer, _ = self.stack.pop()
        self._set(outer & self.scope)

    def loop_push(self):
        self.loops.append([self.mask, self.mask, len(self.stack)])

    def loop_pop(self):
        outer = self.loops.pop()[0]
        self._set(outer & self.scope)

    def _tick(self):
        self.iterations += 1
        if not self.iterations & 1023 and time.monotonic() > self.deadline:
            raise Bail("the vector engine ran out of its share of the timeout")

    def loop_test(self, value):
        """A while loop's test: lanes whose test fails leave the loop; False when none is left."""
        self._tick()
        taken = self.test(value)
        if taken is True:
            self.loops[-1][1] = self.mask
            return True
        if taken is False:
            return False
        self._set(taken)
        self.loops[-1][1] = taken
        return True

    def iterate(self, iterable):
        """A for loop's values: the same on every lane (a range of ints), or a LaneRange."""
        if type(iterable) is LaneRange:
            yield from self._lane_range(iterable)
            return
        if type(iterable) is not range and not (type(iterable) is tuple and not any(
                type(v) is Lanes for v in iterable)):
            raise Bail("a for loop over something other than a range or a tuple")
        frame = self.loops[-1]
        for value in iterable:
            self._tick()
            frame[1] = self.mask
            yield value

    def _lane_range(self, lanes_range):
        """range() with bounds that differ between lanes: each lane leaves the loop when its range ends."""
        frame = self.loops[-1]
        start, stop, step = lanes_range.arrays(self.n)
        value = start
        while True:
            self._tick()
            going = value < stop if step > 0 else value > stop
            active = frame[0] & self.scope & going
            if not active.any():
                return
            self._set(active)
            frame[1] = active
            yield Lanes(value, True)
            value = value + step

    def jump(self):
        """break or continue: only when every lane in the loop's iteration takes it."""
        frame = self.loops[-1]
        if len(self.stack) != frame[2] or not (self.mask == (frame[1] & self.scope)).all():
            raise Bail("break or continue taken by some lanes only")

    def ret(self, value):
        """return: True (a real Python return) when every lane still in the function returns, else those
        lanes leave it (the kernel, or the device function, whose result they keep)."""
        if not self.frames:
            if value is not None:
                raise Bail("a kernel that returns a value")
            if self.full:
                return True
            self.alive = self.scope = self.alive & ~self.mask
        else:
            frame = self.frames[-1]
            if self.full:
                return True
            frame.result = value if frame.result is UNDEF else self._merge(self.mask, value, frame.result)
            self.scope = self.scope & ~self.mask
        self._set(self.mask & ~self.mask)
        return False

    def retval(self, value):
        """What a real return gives back: the value, merged with what lanes that left earlier returned."""
        if not self.frames:
            return None
        frame = self.frames[-1]
        frame.finished = True
        if frame.result is UNDEF:
            return value
        return self._merge(self.mask, value, frame.result)

    def _merge(self, mask, new, old):
        if new is None or old is None:
            if new is None and old is None:
                return None
            raise Bail("a device function that returns a value on some lanes only")
        if type(new) is not Mixed and type(old) is not Mixed and same_type(new, old):
            return Lanes(np.where(mask, lanes_broadcast(new, self.n), lanes_broadcast(old, self.n)),
                         type(new) is Lanes and new.py or type(new) in (bool, int, float))
        return mix(mask, new, old, self.n)

    def _device_call(self, function, args):
        """Call a device function's vector version with the active lanes; its returns are merged."""
        vector = self.launch.device_function(function)
        frame = _Call(self.mask, self.scope, self.tag)
        self.frames.append(frame)
        self.scope = self.mask
        self._set(self.mask)
        self.tag = function.__globals__[TAG]
        try:
            value = vector(self, *args)
        finally:
            self.frames.pop()
            self.tag = frame.tag
            self.scope = frame.scope
            self._set(frame.entry & self.alive)
        if not frame.finished and frame.result is not UNDEF and frame.result is not None:
            raise Bail("a device function that returns a value on some lanes only")
        return value

    def check(self, value):
        if self.mask.any() and self.test(value) is not True:
            raise Bail("an assertion fails on some lane")

    def bail(self, why):
        raise Bail(why)

    # --- values --------------------------------------------------------------------------

    def asg(self, old, new):
        """`old = new` on the active lanes."""
        if self.full:
            return new
        mask = self.mask
        if not mask.any():
            return old
        if old is UNDEF:
            if type(new) is Mixed:
                raise Bail("a variable first assigned values of different types")
            values = lanes_broadcast(new, self.n)
            undef = ~mask
            py = type(new) is Lanes and new.py or type(new) in (bool, int, float)
            return Lanes(values, py, undef)
        if type(old) is not Lanes and type(new) is not Lanes and type(old) is type(new) and old == new:
            return old
        if type(old) is Mixed or type(new) is Mixed or not same_type(old, new):
            if type(old) is Lanes and old.undef is not None:
                raise Bail("a variable that holds values of different types on different lanes")
            return mix(mask, new, old, self.n)
        merged = np.where(mask, lanes_broadcast(new, self.n), lanes_broadcast(old, self.n))
        undef = None
        if type(old) is Lanes and old.undef is not None:
            undef = old.undef & ~mask
            if not undef.any():
                undef = None
        py = old.py if type(old) is Lanes else type(old) in (bool, int, float)
        return Lanes(merged, py, undef)

    def unpack(self, value, count):
        if type(value) is not tuple or len(value) != count:
            raise Bail("unpacking something other than a tuple of the right length")
        return value

    def not_(self, value):
        if type(value) is not Lanes:
            return not value
        return Lanes(~truth(value), True)

    def _logic(self, test, value, rest, keep_going):
        """`and` (keep_going: truth) and `or` (keep_going: falsity), lane by lane, evaluating each next
        operand only on the lanes that still need it."""
        for following in rest:
            if type(value) is not Lanes:
                if bool(value) != keep_going:
                    return value
                value = following()
                continue
            if type(value) is Mixed:
                value = value.resolve()
            t = truth(value)
            going = t if keep_going else ~t
            going = going if self.all_active else going & self.mask
            if not going.any():
                break
            self.push(going)
            try:
                nxt = following()
            finally:
                self.pop()
            if test:
                nxt_truth = truth(nxt) if type(nxt) is Lanes else np.full(self.n, bool(nxt))
                value = Lanes(np.where(going, nxt_truth, t), True)
            elif type(nxt) is Mixed or not same_type(value, nxt):
                value = mix(going, nxt, value, self.n)
            else:
                value = Lanes(np.where(going, lanes_broadcast(nxt, self.n), value.a), value.py)
        if test and type(value) is Lanes:
            return Lanes(truth(value), True)
        return value

    def and_(self, test, value, *rest):
        return self._logic(test, value, rest, True)

    def or_(self, test, value, *rest):
        return self._logic(test, value, rest, False)

    def ifexp(self, test, body, orelse):
        taken = self.test(test)
        if taken is True:
            return body()
        if taken is False:
            return orelse()
        self.push(taken)
        try:
            yes = body()
            self.flip()
            no = orelse()
        finally:
            self.pop()
        if type(yes) is Mixed or type(no) is Mixed or not same_type(yes, no):
            return mix(taken, yes, no, self.n)
        return Lanes(np.where(taken, lanes_broadcast(yes, self.n), lanes_broadcast(no, self.n)),
                     yes.py if type(yes) is Lanes else type(yes) in (bool, int, float))

    def chain(self, test, left, *steps):
        """`a < b < c`: each comparison only on the lanes where the ones before it held."""
        value, previous = None, left
        for name, right in steps:
            op = getattr(operator, name)
            if value is None:
                current = right()
                value, previous = op(previous, current), current
                continue
            evaluated = []

            def step(op=op, before=previous, right=right, evaluated=evaluated):
                evaluated.append(right())
                return op(before, evaluated[-1])

            value = self.and_(test, value, step)
            if not evaluated:
                break
            previous = evaluated[0]
        return value

    # --- calls ---------------------------------------------------------------------------

    def call(self, site, function, *args, **kwargs):
        if function is _barrier:
            return self._syncthreads()
        if function is _shared_array:
            return self._shared_array(site, *args, **kwargs)
        if function is _local_array:
            return self._local_array(*args, **kwargs)
        if kwargs:
            raise Bail("a call with keyword arguments")
        if function is range:
            if any(type(a) in (Lanes, Mixed) for a in args):
                return LaneRange(*args)
            return range(*args)
        if function is len:
            return len(args[0])
        if type(function) is types.FunctionType and TAG in function.__globals__:
            return self._device_call(function, args)
        underlying = getattr(function, "__func__", None)
        if underlying in (FakeCuda.grid, FakeCuda.gridsize) or function is FakeCuda.fma:
            return function(*args)
        if function in PURE:
            return lanes_call(function, *args)
        raise Bail(f"a call of {getattr(function, '__name__', type(function).__name__)}")

    def _syncthreads(self):
        alive = self.alive.reshape(self.nblocks, self.nt)
        at = self.mask.reshape(self.nblocks, self.nt)
        if not (at.all(axis=1) | ~alive.any(axis=1)).all():
            raise Bail("a barrier that some threads of a block do not reach")
        self.launch.end_epoch(self)
        self.block_barriers[at.all(axis=1)] += 1
        self.epoch += 1

    def _shared_array(self, site, shape, dtype):
        known = self.shared.get(site)
        if known is not None:
            return known
        parts = shape if isinstance(shape, tuple) else (shape,)
        try:
            shape = tuple(operator.index(p) for p in parts)
            dtype = np.dtype(dtype)
        except TypeError:
            raise Bail("a shared array of unusual shape or dtype") from None
        size = int(np.prod(shape, dtype=np.int64))
        if size == 0:
            array = self._dynamic_array(dtype)
            self.shared[site] = array
            return array
        nbytes = size * dtype.itemsize
        present = self.mask.reshape(self.nblocks, self.nt).any(axis=1)
        self.static_shared[present] += nbytes
        launch = self.launch
        if (self.static_shared > STATIC_SHARED_LIMIT).any() or (
                self.static_shared + launch.dynamic_bytes > launch.shared_limit).any():
            raise Bail("more shared memory than a block may use")
        flat = np.zeros(size * self.nblocks, dtype=dtype)
        array = launch.new_shared(site, flat, shape, size, nbytes)
        self.shared[site] = array
        return array

    def _local_array(self, shape, dtype):
        """cuda.local.array: one fresh copy per thread (NaN-filled floats in a checked launch, as the thread
        engine fills them), bounds-checked and not logged."""
        parts = shape if isinstance(shape, tuple) else (shape,)
        try:
            shape = tuple(operator.index(p) for p in parts)
            dtype = np.dtype(dtype)
        except TypeError:
            raise Bail("a local array of unusual shape or dtype") from None
        size = int(np.prod(shape, dtype=np.int64))
        checked = self.launch.checked
        fill = np.nan if checked and dtype.kind in "fc" else 0
        flat = np.full(self.n * size, fill, dtype=dtype)
        return WaveArray(flat, shape, False, not checked, block_size=size, per_lane=True)

    def _dynamic_array(self, dtype):
        """A view of the launch's dynamic shared memory (every call site shares the same bytes)."""
        launch = self.launch
        nbytes = launch.dynamic_bytes
        if nbytes % dtype.itemsize:
            raise Bail("dynamic shared memory that is not a whole number of elements")
        if self.dynamic is None:
            self.dynamic = np.zeros(nbytes * self.nblocks, dtype=np.uint8)
            self.dynamic_itemsize = dtype.itemsize
        elif dtype.itemsize != self.dynamic_itemsize and not launch.checked:
            raise Bail("unchecked views of dynamic shared memory with different element sizes")
        return launch.new_dynamic(self.dynamic.view(dtype), nbytes // dtype.itemsize)

    # --- element access ------------------------------------------------------------------

    def _array(self, value):
        if not isinstance(value, (DeviceArray, np.ndarray, WaveArray)):
            return None
        if type(value) is WaveArray:
            return value
        launch = self.launch
        known = launch.wave_arrays.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        array = wave_array_of(value, ("global", id(value)))
        launch.wave_arrays[id(value)] = (value, array)
        return array

    def _index(self, array, index):
        """The element offset inside the block's copy: one per lane, or one int; bounds checked."""
        parts = index if type(index) is tuple else (index,)
        if len(parts) != array.ndim:
            raise Bail("a partial index or a slice")
        offset = 0
        lanes = None
        for part, size, stride in zip(parts, array.shape, array.strides, strict=True):
            if type(part) is Lanes:
                values = part.a
                kind = values.dtype.kind
                if kind not in "iu" and not (part.py and kind == "b"):
                    raise Bail("an index that is not an int on every lane")
                if part.undef is not None and (part.undef & self.mask).any():
                    raise Bail("an index read before every lane assigned it")
                active = values if self.all_active else values[self.mask]
                if active.size:
                    low, high = active.min(), active.max()
                    if low < 0:
                        if not array.wrap or low < -size:
                            raise Bail("an index out of bounds")
                        values = np.where(values < 0, values + size, values)
                        high = max(high, 0)
                    if high >= size:
                        raise Bail("an index out of bounds")
                term = values.astype(np.int64, copy=False)
                term = term * stride if stride != 1 else term
                lanes = term if lanes is None else lanes + term
            else:
                try:
                    i = operator.index(part)
                except TypeError:
                    raise Bail("an index that is not an int") from None
                if i < 0 and array.wrap:
                    i += size
                if not 0 <= i < size:
                    raise Bail("an index out of bounds")
                offset += i * stride
        if lanes is None:
            return offset
        return lanes + offset if offset else lanes

    def _where(self, array, local):
        """Flat indices into array.flat for each lane (or one int for a global array and one element)."""
        if array.global_:
            return local
        if array.per_lane:
            return self.lane_offsets(array.block_size) + local
        base = self.block_of_lane * array.block_size
        return base + local

    def lane_offsets(self, size):
        known = self.offsets.get(size)
        if known is None:
            known = self.offsets[size] = np.arange(self.n, dtype=np.int64) * size
        return known

    def ld(self, value, index, site):
        array = self._array(value)
        if array is None:
            if any(type(p) is Lanes for p in (index if type(index) is tuple else (index,))):
                raise Bail("indexing a tuple or list with a per-thread value")
            return value[index]
        local = self._index(array, index)
        where = self._where(array, local)
        self._log(array, local, where, False, site)
        if type(where) is not np.ndarray:
            return array.flat[where]
        if self.all_active:
            return Lanes(array.flat[where], False)
        values = np.zeros(self.n, dtype=array.dtype)
        values[self.mask] = array.flat[where[self.mask]]
        return Lanes(values, False)

    def st(self, value, index, item, site):
        array = self._array(value)
        if array is None:
            raise Bail("a store into something other than an array")
        if array.readonly:
            raise Bail("a store into a read-only array")
        local = self._index(array, index)
        where = self._where(array, local)
        self._log(array, local, where, True, site)
        if type(item) is Mixed:
            values = np.empty(self.n, dtype=array.dtype)
            for lanes, part in item.parts:
                part = part if type(part) is Lanes else Lanes(lanes_broadcast(part, self.n), True)
                values[lanes] = self._cast(part, array.dtype)[lanes]
            item = Lanes(values, False)
        if type(item) is Lanes:
            values = self._cast(item, array.dtype)
            if type(where) is not np.ndarray:
                where = np.full(self.n, where, dtype=np.int64)
            if self.all_active:
                array.flat[where] = values
            else:
                array.flat[where[self.mask]] = values[self.mask]
            return
        if type(item) not in (bool, int, float) and not isinstance(item, np.generic):
            raise Bail(f"a store of a {type(item).__name__}")
        if type(where) is np.ndarray and not self.all_active:
            where = where[self.mask]
        if not self.mask.any():
            return
        array.flat[where] = item

    def _cast(self, item, dtype):
        """The values stored from Lanes, as NumPy converts each lane's scalar on assignment."""
        values = item.a
        if item.undef is not None and (item.undef & self.mask).any():
            raise Bail("a variable read before every lane assigned it")
        active = values if self.all_active else values[self.mask]
        if dtype.kind in "iub" and values.dtype.kind == "f":
            if active.size and (~np.isfinite(active)).any():
                raise Bail("a float that is not finite stored into an int array")
            if dtype.kind != "b":
                info = np.iinfo(dtype)
                if active.size and (active.min() <= info.min - 1 or active.max() >= info.max + 1):
                    raise Bail("a float out of range for the int array")
        if item.py and values.dtype.kind == "i" and dtype.kind in "iu":
            info = np.iinfo(dtype)
            if active.size and (active.min() < info.min or active.max() > info.max):
                raise Bail("a Python int out of range for the array")
        with np.errstate(all="ignore"):
            return values.astype(dtype, copy=False)

    def _log(self, array, local, where, write, site):
        if array.per_lane:
            return
        launch = self.launch
        lanes = None if self.all_active else np.flatnonzero(self.mask)
        self.entries += self.n if lanes is None else len(lanes)
        if self.entries > MAX_WAVE_ENTRIES:
            raise WaveTooLarge("a wave with more element accesses than the engine keeps at once")
        if launch.checked:
            meta = (array.write_meta if write else array.read_meta) + self.tag + site
            elements = local + array.element_base
            if lanes is not None and type(elements) is np.ndarray:
                elements = elements[lanes]
            self.records.append((self.epoch, lanes, elements, meta))
        else:
            if lanes is not None and type(where) is np.ndarray:
                where = where[lanes]
            self.touches.setdefault(array.key, []).append((self.epoch, lanes, where, write, array.global_))


class LaneRange:
    """range(start, stop, step) whose start or stop differs between lanes (step the same on every lane)."""

    __slots__ = ("args",)

    def __init__(self, *args):
        self.args = args

    def arrays(self, n):
        """(start, stop, step): int64 arrays and an int."""
        args = self.args
        if len(args) == 1:
            args = (0, args[0])
        if len(args) not in (2, 3):
            raise Bail("range() with other than 1 to 3 arguments")
        step = args[2] if len(args) == 3 else 1
        if type(step) is Lanes or type(step) is Mixed:
            raise Bail("a range whose step differs between lanes")
        step = operator.index(step)
        if step == 0:
            raise Bail("range() with a step of 0")
        bounds = []
        for bound in args[:2]:
            if type(bound) is Mixed:
                bound = bound.resolve()
            if type(bound) is Lanes:
                if bound.a.dtype.kind not in "iu" and not (bound.py and bound.a.dtype.kind == "b"):
                    raise Bail("a range of values that are not ints")
                active = bound.undef if ctx.mask is None or bound.undef is None else bound.undef & ctx.mask
                if active is not None and active.any():
                    raise Bail("a range bound read before every lane assigned it")
                bounds.append(bound.a.astype(np.int64))
            else:
                bounds.append(np.full(n, operator.index(bound), dtype=np.int64))
        return bounds[0], bounds[1], step


class _Call:
    """A device function being called: the lanes that called it and what the ones that returned gave."""

    __slots__ = ("entry", "scope", "tag", "result", "finished")

    def __init__(self, entry, scope, tag):
        self.entry = entry
        self.scope = scope
        self.tag = tag
        self.result = UNDEF
        self.finished = False


def thread_dims(block):
    """threadIdx components (Lanes-ready arrays) of one block's threads in linear order."""
    linear = np.arange(block.x * block.y * block.z)
    return linear % block.x, linear // block.x % block.y, linear // (block.x * block.y)


class VectorLaunch:
    """One launch on the vector engine: waves of whole blocks, then the checker's replay (checked) or the
    order check (unchecked). Raises Bail when the thread engine must run it instead."""

    def __init__(self, fn, args, grid, block, dynamic_bytes, shared_limit, fake, memory, checker, tag,
                 vector_deadline, lanes_per_wave=WAVE_LANES):
        self.fn = fn
        self.args = args
        self.grid = grid
        self.block = block
        self.nthreads = block.x * block.y * block.z
        self.dynamic_bytes = dynamic_bytes
        self.shared_limit = shared_limit
        self.fake = fake
        self.memory = memory
        self.checker = checker
        self.checked = checker is not None
        self.tag = tag
        self.vector_deadline = vector_deadline
        self.lanes_per_wave = lanes_per_wave
        self.wave_arrays = {}
        self.device_functions = {}
        self.shared_specs = {}  # site -> (region site, name, nbytes)
        self.blocks = 0
        self.barriers = 0
        self.max_block_barriers = 0
        self.max_static_shared = 0
        bx, by, bz = block
        self.threads = [SimThread(Dim3(x, y, z), i) for i, (x, y, z) in enumerate(
            (x, y, z) for z in range(bz) for y in range(by) for x in range(bx))]

    def run(self):
        grid = self.grid
        order = [Dim3(x, y, z) for z in range(grid.z) for y in range(grid.y) for x in range(grid.x)]
        per_wave = max(1, self.lanes_per_wave // self.nthreads)
        for start in range(0, len(order), per_wave):
            if time.monotonic() > self.vector_deadline:  # a wave's loops check too (Wave._tick)
                raise Bail("the vector engine ran out of its share of the timeout")
            self._run_wave(order[start: start + per_wave])

    def _lanes_of(self, per_block):
        """threadIdx or blockIdx components over the wave: an int where every lane agrees, else Lanes."""
        values = np.asarray(per_block)
        first = int(values.flat[0])
        if (values == first).all():
            return first
        return Lanes(values.astype(np.int64), True)

    def _run_wave(self, blocks):
        nblocks, nt = len(blocks), self.nthreads
        wave = Wave(self, nblocks)
        tx, ty, tz = thread_dims(self.block)
        fake = self.fake
        fake.blockDim, fake.gridDim = self.block, self.grid
        fake.threadIdx = Dim3(*(self._lanes_of(np.tile(t, nblocks)) for t in (tx, ty, tz)))
        fake.blockIdx = Dim3(*(self._lanes_of(np.repeat([getattr(b, axis) for b in blocks], nt))
                               for axis in "xyz"))
        fake.laneid = self._lanes_of(np.tile(np.arange(nt) % WARP_SIZE, nblocks))
        try:
            self.fn(wave, *self.args)
        finally:
            ctx.mask = None
        self.end_epoch(wave, last=True)
        if self.checked:
            try:
                self._replay(wave, blocks)
            except Exception as error:  # the message needs the thread engine's code objects: it reruns
                raise Bail(f"the checker found an error ({type(error).__name__})") from None
        self.blocks += nblocks
        self.barriers += int(wave.block_barriers.sum())
        self.max_block_barriers = max(self.max_block_barriers, int(wave.block_barriers.max()))
        self.max_static_shared = max(self.max_static_shared, int(wave.static_shared.max()))

    def device_function(self, function):
        """The vector version of a rebound device function (made once per launch)."""
        known = self.device_functions.get(function)
        if known is None:
            code, reason = vector_code(function.__code__)
            if code is None:
                raise Bail(reason)
            known = self.device_functions[function] = bind(code, function)
            if self.checked:
                self.memory.codes[function.__globals__[TAG] >> TAG_SHIFT] = None
        return known

    def new_shared(self, site, flat, shape, size, nbytes):
        """A shared array of the wave; in a checked launch, its region (one per block, made at replay)."""
        element_base = itemsize_meta = 0
        if self.checked:
            spec = self.shared_specs.get(site)
            if spec is None:
                name = "shared"
                region = self.memory.shared_region(("vector", site), name, nbytes, False)
                self.memory.itemsizes[region.id] = flat.itemsize
                spec = self.shared_specs[site] = (("vector", site), name, nbytes, False, region.base)
            element_base = spec[4] // flat.itemsize
            itemsize_meta = (flat.itemsize.bit_length() - 1) << SIZE_SHIFT
        return WaveArray(flat, shape, False, False, element_base, itemsize_meta, block_size=size,
                         key=("shared", site))

    def new_dynamic(self, flat, count):
        """A view of the wave's dynamic shared memory; in a checked launch, its one region per block."""
        element_base = itemsize_meta = 0
        if self.checked:
            spec = self.shared_specs.get("dynamic")
            if spec is None:
                region = self.memory.shared_region("dynamic", "dynamic", self.dynamic_bytes, True)
                self.memory.itemsizes[region.id] = flat.itemsize
                spec = self.shared_specs["dynamic"] = ("dynamic", "dynamic", self.dynamic_bytes, True,
                                                       region.base)
            element_base = spec[4] // flat.itemsize
            itemsize_meta = (flat.itemsize.bit_length() - 1) << SIZE_SHIFT
        return WaveArray(flat, (count,), False, False, element_base, itemsize_meta, block_size=count,
                         key=("shared", "dynamic"))

    def end_epoch(self, wave, last=False):
        """A barrier (or the end of the kernel) closes the wave's epoch; unchecked, check the order now."""
        if not self.checked:
            _check_order(wave, last)

    def _replay(self, wave, blocks):
        """Hand the wave's accesses to the checker block by block, as the thread engine would have logged
        them: epoch by epoch, each thread's accesses in program order, thread after thread."""
        checker, log, nt = self.checker, self.memory.log, self.nthreads
        by_epoch = {}
        for epoch, lanes, elements, meta in wave.records:
            by_epoch.setdefault(epoch, []).append((lanes, elements, meta))
        arranged = {epoch: self._arrange(records, wave.n, wave.nblocks)
                    for epoch, records in by_epoch.items()}
        for b, block_idx in enumerate(blocks):
            checker.begin_block(block_idx, self.threads, self.block)
            for site, name, nbytes, dynamic, _ in self.shared_specs.values():
                self.memory.shared_region(site, name, nbytes, dynamic)
            passed = int(wave.block_barriers[b])
            for epoch in range(passed + 1):
                if epoch in arranged:
                    lane, element, meta, bounds = arranged[epoch]
                    lo, hi = bounds[b], bounds[b + 1]
                    if hi > lo:
                        _append(log, lane[lo:hi] - b * nt, element[lo:hi], meta[lo:hi])
                if epoch < passed:
                    checker.end_epoch()
            checker.end_block()

    def _arrange(self, records, n, nblocks):
        """(lane, element, meta, block bounds) of one epoch's records, lane after lane, in program order."""
        if all(lane is None for lane, _, _ in records):  # every record covers every lane: transpose
            elements = np.empty((len(records), n), dtype=np.int64)
            for row, (_, element, _) in enumerate(records):
                elements[row] = element
            metas = np.array([meta for _, _, meta in records], dtype=np.int64)
            lane = np.repeat(np.arange(n), len(records))
            element = elements.T.ravel()
            meta = np.tile(metas, n)
        else:
            lanes, elements, metas = [], [], []
            for lane, element, meta in records:
                lane = np.arange(n) if lane is None else lane
                lanes.append(lane)
                elements.append(np.broadcast_to(np.asarray(element, dtype=np.int64), lane.shape))
                metas.append(np.full(len(lane), meta, dtype=np.int64))
            lane = np.concatenate(lanes)
            order = np.argsort(lane, kind="stable")
            lane = lane[order]
            element = np.concatenate(elements)[order]
            meta = np.concatenate(metas)[order]
        bounds = np.searchsorted(lane, np.arange(nblocks + 1) * self.nthreads)
        return lane, element, meta, bounds

    def report_fields(self):
        return {
            "blocks": self.blocks,
            "threads": self.blocks * self.nthreads,
            "barriers": self.barriers,
            "max_block_barriers": self.max_block_barriers,
            "max_thread_collectives": 0,
            "static_shared_bytes": self.max_static_shared,
        }


def _append(log, tid, element, meta):
    """Log entries of one block and epoch (sorted by thread) with one segment per thread."""
    base = len(log.keys)
    pairs = np.empty(2 * len(tid), dtype=np.int64)
    pairs[0::2] = element
    pairs[1::2] = meta
    starts = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1]])
    segments = np.empty((len(starts), 3), dtype=np.int64)
    segments[:, 0] = base + 2 * starts
    segments[:, 1] = tid[starts]
    segments[:, 2] = 0
    log.keys.frombytes(pairs.tobytes())
    log.segments.frombytes(segments.tobytes())


def _check_order(wave, last):
    """Unchecked: give up if two lanes touch one element, one of them writing, where the thread engine's
    order (thread after thread) could differ from the wave's (statement after statement)."""
    keep = {}
    for key, touches in wave.touches.items():
        if touches[0][4] and not last:  # global memory: the whole wave counts as one epoch
            keep[key] = touches
        elif any(t[3] for t in touches):
            _conflicts(touches, wave.n)
    wave.touches = keep


def _conflicts(touches, n):
    lanes, where, writes = [], [], []
    for _, lane, flat, write, _ in touches:
        lane = np.arange(n) if lane is None else lane
        lanes.append(lane)
        where.append(np.broadcast_to(np.asarray(flat, dtype=np.int64), lane.shape))
        writes.append(np.full(len(lane), write))
    lane, flat, write = np.concatenate(lanes), np.concatenate(where), np.concatenate(writes)
    order = np.argsort(flat, kind="stable")
    flat, lane, write = flat[order], lane[order], write[order]
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    several = np.minimum.reduceat(lane, starts) != np.maximum.reduceat(lane, starts)
    if (several & np.logical_or.reduceat(write, starts)).any():
        raise Bail("two threads touch one element, one of them writing, with nothing to order them")


def bind(code, function):
    """The vector code of `function` with its globals, defaults and closure."""
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or (), strict=True))
    closure = tuple(cells[name] for name in code.co_freevars) or None
    return types.FunctionType(code, function.__globals__, function.__name__, function.__defaults__, closure)
