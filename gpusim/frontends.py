"""The Numba CUDA front ends whose kernels gpusim runs, known by module name: nothing here imports them.

A kernel refers to its front end's `cuda` module (or to members imported from it by name), to its scalar types
and to its dispatchers; gpusim.rebind swaps each for the simulated counterpart. Adding a front end is one
entry in FRONT_ENDS.
"""

import functools
import sys
from typing import NamedTuple


class FrontEnd(NamedTuple):
    package: str  # the top-level package: dispatchers and scalar types are recognised by their module's root
    cuda: str  # the module that kernels call `cuda`
    namespaces: tuple  # modules whose scalar types kernels read as attributes (`numba.float32`)
    stand_ins: tuple = ()  # prefixes of other modules that stand for the whole of `cuda`


FRONT_ENDS = (
    FrontEnd("numba", "numba.cuda", ("numba", "numba.types", "numba.core.types"), ("numba.cuda.simulator",)),
    FrontEnd("numba_cuda_mlir", "numba_cuda_mlir.cuda", ("numba_cuda_mlir", "numba_cuda_mlir.types")),
)

_PACKAGES = frozenset(front_end.package for front_end in FRONT_ENDS)
_NAMESPACES = frozenset(name for front_end in FRONT_ENDS for name in front_end.namespaces)
_PLAIN_VALUES = (type(None), bool, int, float, str)


def from_front_end(cls):
    """Whether a class (a dispatcher's, a scalar type's) belongs to one of the front ends."""
    return (cls.__module__ or "").partition(".")[0] in _PACKAGES


def is_namespace(module_name):
    """Whether kernels read scalar types from this module (`numba`, `numba_cuda_mlir.types`)."""
    return module_name in _NAMESPACES


def cuda_part(module_name):
    """"" when the module stands for a whole `cuda` module, the member name when it is a submodule of one
    (`numba_cuda_mlir.cuda.shared` gives "shared"), else None."""
    for front_end in FRONT_ENDS:
        if module_name == front_end.cuda or any(module_name.startswith(s) for s in front_end.stand_ins):
            return ""
        parent, _, member = module_name.rpartition(".")
        if parent == front_end.cuda:
            return member
    return None


def cuda_modules():
    """The front ends' `cuda` modules that this process has imported."""
    return [sys.modules[front_end.cuda] for front_end in FRONT_ENDS if front_end.cuda in sys.modules]


def cuda_member(value, names):
    """The name under which an imported `cuda` module exports `value` (`from numba.cuda import grid`),
    among `names` (a frozenset); None when it exports it under none of them."""
    for module in cuda_modules():
        found = _members(module, names).get(id(value))
        if found is not None and found[1] is value:
            return found[0]
    return None


@functools.lru_cache(maxsize=8)
def _members(module, names):
    """id -> (name, object) for the module's members in `names`; plain values (`warpsize = 32`) are left
    out, since any 32 in a kernel would match them."""
    index = {}
    for name in names:
        value = getattr(module, name, None)
        if not isinstance(value, _PLAIN_VALUES):
            index[id(value)] = (name, value)
    return index
