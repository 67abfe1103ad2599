"""Memory regions (global arguments, shared arrays) and the access log that checked arrays write to."""

import re
from array import array

import numpy as np

from .arrays import device_array
from .errors import ResourceError

REGION_BITS = 30
OFFSET_MASK = (1 << REGION_BITS) - 1
STATIC_SHARED_LIMIT = 48 * 1024
FIRST_REGION = 1 << 6
MAX_REGIONS = 1 << 7

_ASSIGNED_NAME = re.compile(r"^\s*([A-Za-z_]\w*)\s*=")


class AccessLog:
    """Per-access int64 pairs (see arrays.py); flat (start, thread, warp epoch) triples that say which
    thread made the entries from `start` on; and where each barrier epoch ends (in entries)."""

    __slots__ = ("keys", "segments", "epoch_ends")

    def __init__(self):
        self.keys = array("q")
        self.segments = array("q")
        self.epoch_ends = []

    def clear(self):
        del self.keys[:]
        del self.segments[:]
        self.epoch_ends.clear()


class Region:
    """One allocation: a global argument's buffer or one shared array of a block. ``readonly`` is False,
    True (a constant: an array from module level or a closure, or constant memory) or READ_ONLY_ARGUMENT
    (an argument whose NumPy writeable flag is off)."""

    __slots__ = ("id", "base", "name", "kind", "nbytes", "dynamic", "readonly", "init", "primary",
                 "primary_offset")

    def __init__(self, region_id, name, kind, nbytes, dynamic=False, readonly=False):
        self.id = region_id
        self.readonly = readonly
        self.base = region_id << REGION_BITS
        self.name = name
        self.kind = kind
        self.nbytes = nbytes
        self.dynamic = dynamic
        self.init = np.zeros(nbytes, dtype=bool) if kind == "shared" else None
        self.primary = None
        self.primary_offset = 0

    def element_text(self, offset):
        """`sA[3, 4]` for the element at byte `offset`."""
        if self.primary is None:
            return f"{self.name}[byte {offset}]"
        index = self.primary.index_of(offset - self.primary_offset)
        text = ", ".join(str(int(i)) for i in index) if isinstance(index, tuple) else str(int(index))
        return f"{self.name}[{text}]"


def c_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def root_array(array):
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


def name_from_line(line, fallback):
    """`sA` for the source line `sA = cuda.shared.array(...)`."""
    match = _ASSIGNED_NAME.match(line)
    return match.group(1) if match else fallback


class Memory:
    """All regions of one launch and the log their checked arrays append to."""

    def __init__(self):
        self.log = AccessLog()
        self.codes = []
        self.regions = {}
        self.is_shared = np.zeros(MAX_REGIONS, dtype=bool)
        self.itemsizes = np.zeros(MAX_REGIONS, dtype=np.int64)
        self._roots = {}
        self._shared_ids = {}

    def _new_region(self, name, kind, nbytes, dynamic=False, readonly=False):
        if nbytes > OFFSET_MASK:
            raise ResourceError(
                f"array {name} has {nbytes} bytes; checked launches support up to 1 GiB per array.",
                "use smaller arrays, or check=False.",
            )
        region = Region(FIRST_REGION + len(self.regions), name, kind, nbytes, dynamic, readonly)
        if region.id >= MAX_REGIONS:
            raise ResourceError(f"the launch uses more than {MAX_REGIONS - FIRST_REGION} distinct arrays.")
        self.regions[region.id] = region
        self.is_shared[region.id] = kind == "shared"
        return region

    def global_array(self, array, name, readonly=False):
        """A checked view of a contiguous numpy argument; views of one buffer share a region. A read-only one
        (a module-level array, frozen as Numba freezes it, or an argument NumPy marks read-only) refuses
        writes."""
        root = root_array(array)
        offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        if not root.flags.c_contiguous or offset % array.itemsize:
            root, offset = array, 0
        region = self._roots.get(id(root))
        if region is None:
            region = self._new_region(name, "global", root.nbytes, readonly=readonly)
            self._roots[id(root)] = region
        arr = device_array(
            array.reshape(-1), array.shape, c_strides(array.shape), 0, region, self.log.keys, offset
        )
        if region.primary is None:
            region.primary, region.primary_offset = arr, offset
            self.itemsizes[region.id] = array.itemsize
        return arr

    def shared_region(self, site, name, nbytes, dynamic):
        """A fresh region for one shared array of the block now running (same id for every block)."""
        region_id = self._shared_ids.get(site)
        if region_id is None:
            region = self._new_region(name, "shared", nbytes, dynamic)
            self._shared_ids[site] = region.id
            return region
        region = Region(region_id, name, "shared", nbytes, dynamic)
        self.regions[region_id] = region
        return region

    def shared_array(self, region, buffer, dtype, shape):
        """A checked view of a block's shared array; a static one (nothing aliases it) reads from a list."""
        arr = device_array(buffer.view(dtype), shape, c_strides(shape), 0, region, self.log.keys,
                           mirror=not region.dynamic)
        if region.primary is None:
            region.primary = arr
            self.itemsizes[region.id] = arr.dtype.itemsize
        return arr
