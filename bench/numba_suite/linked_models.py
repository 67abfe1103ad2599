"""NumPy models of the CUDA C++ device functions that numba-cuda's tests link with `cuda.declare_device`,
registered with `gpusim.stand_in` as any user of gpusim registers theirs, and what
`cuda.declare_device` gives under Numba's simulator (which declares nothing).

Each model follows its C source in the tests (numba/cuda/tests/cudapy/test_device_func.py, data/jitlink.cu,
doc_examples/ffi/*.cu); a pointer argument (from `ffi.from_buffer`) arrives as the array it points into.
Functions not modelled here (curand's random_number, the cooperative cta_barrier) stay refused by gpusim.
"""

from dataclasses import dataclass

import numpy as np

from gpusim import stand_in


@dataclass(frozen=True)
class DeclaredDevice:
    """A declared device function: its name and Numba signature (gpusim finds the model by the name)."""

    name: str
    sig: object


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """numba-cuda's cuda.declare_device, without the linking: the signature is checked as numba-cuda checks
    it (a return type is required)."""
    from numba.cuda.core import sigutils
    from numba.cuda.typing import signature

    argtypes, restype = sigutils.normalize_signature(sig)
    if restype is None:
        raise TypeError("Return type must be provided for device declarations")
    return DeclaredDevice(name, signature(restype, *argtypes))


def _int32(value):
    return np.array(int(value), dtype=np.int64).astype(np.int32)[()]


@stand_in("times2")
def times2(a):
    return _int32(int(a) * 2)


@stand_in("times3")
def times3(a):
    return _int32(int(a) * 3)


@stand_in("times4")
def times4(a):
    return _int32(int(times2(a)) * 2)


@stand_in("const42")
def const42():
    return np.int32(42)


@stand_in("add2")
def add2(a, b):
    return _int32(int(a) + int(b))


@stand_in("consume")
def consume(a):
    """void consume(int a) does nothing; void consume(int *a) stores 42 through the pointer."""
    if not np.isscalar(a):
        a[0] = 42


@stand_in("array_mutator")
def array_mutator(a):
    a[0] = a[1]


@stand_in("use_array_mutator")
def use_array_mutator(a):
    array_mutator(a)


@stand_in("mul_f32_f32")
def mul_f32_f32(x, y):
    return np.float32(x) * np.float32(y)


@stand_in("sum_reduce")
def sum_reduce(array, n):
    total = 0.0
    for i in range(int(n)):
        total += float(array[i])
    return np.float32(total)


@stand_in("saxpy")
def saxpy(a, x, y):
    return np.float32(np.float32(a) * np.float32(x)) + np.float32(y)


@stand_in("add_f2_f2")
def add_f2_f2(a, b):
    return np.float16(a[0]) + np.float16(b[0])
