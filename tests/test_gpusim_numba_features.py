"""The features of numba-cuda that its own test suite uses and gpusim now runs (issue #30), each checked and
unchecked with the results a GPU gives; and the refusals that remain name their feature."""

import enum
import math
from dataclasses import dataclass

import numpy as np
import pytest
from numba import cuda, float32
from numba.cuda import libdevice
from numba.cuda.extending import overload

import gpusim
from gpusim import stand_in

BOTH = pytest.mark.parametrize("check", [True, False])


def run(kernel, config, *args, check=True, **options):
    gpusim.jit(kernel, check=check, **options)[config](*args)
    return args


@cuda.jit
def ufuncs(x, out):
    np.sin(x, out)
    np.add(out, x, out)


@BOTH
def test_numpy_ufuncs_over_whole_arrays(check):
    x = np.linspace(0, 1, 8)
    (_, out) = run(ufuncs, (1, 1), x, np.zeros(8), check=check)
    assert np.array_equal(out, np.sin(x) + x)


@cuda.jit
def half_precision(a, b, out):
    out[0] = cuda.fp16.hadd(a[0], b[0])
    out[1] = cuda.fp16.hfma(a[0], b[0], a[0])
    out[2] = cuda.fp16.hmax(a[0], b[0])


@BOTH
def test_fp16_intrinsics_round_once_to_float16(check):
    a, b = np.array([1.5], np.float16), np.array([np.float16(0.1)], np.float16)
    (_, _, out) = run(half_precision, (1, 1), a, b, np.zeros(3, np.float16), check=check)
    assert out[0] == a[0] + b[0] and out[2] == a[0]
    assert out[1] == np.float16(float(a[0]) * float(b[0]) + float(a[0]))


@cuda.jit
def cache_hints(x, out):
    i = cuda.grid(1)
    cuda.stcg(out, i, cuda.ldca(x, i) + cuda.ldcg(x, i))


@BOTH
def test_cache_hint_loads_and_stores(check):
    x = np.arange(4, dtype=np.int32)
    (_, out) = run(cache_hints, (1, 4), x, np.zeros(4, np.int32), check=check)
    assert out.tolist() == [0, 2, 4, 6]


@cuda.jit
def aligned(addresses):
    local = cuda.local.array(3, dtype=np.int8, alignment=64)
    shared = cuda.shared.array(5, dtype=np.int8, alignment=128)
    addresses[0] = local.ctypes.data % 64
    addresses[1] = shared.ctypes.data % 128


@cuda.jit
def misaligned(addresses):
    local = cuda.local.array(3, dtype=np.int8, alignment=3)
    addresses[0] = local.ctypes.data


@BOTH
def test_alignment_of_local_and_shared_arrays(check):
    (addresses,) = run(aligned, (1, 1), np.ones(2, np.int64), check=check)
    assert addresses.tolist() == [0, 0]
    with pytest.raises(gpusim.KernelException, match="Alignment must be a power of 2"):
        run(misaligned, (1, 1), np.zeros(1, np.int64), check=check)


@cuda.jit
def bits(x, out, roots):
    out[0] = cuda.popc(x[0])
    out[1] = cuda.clz(x[0])
    out[2] = cuda.ffs(x[0])
    out[3] = cuda.brev(np.uint32(1))
    roots[0] = cuda.cbrt(roots[1])


@BOTH
def test_bit_intrinsics_and_cbrt(check):
    x = np.array([0b10110000], np.int32)
    (_, out, roots) = run(bits, (1, 1), x, np.zeros(4, np.uint32), np.array([0.0, 6.0]), check=check)
    assert out.tolist() == [3, 24, 5, 1 << 31]
    assert roots[0] == 1.8171205928321397  # 6 ** (1/3), rounded correctly


@cuda.jit
def reshaped(a, out):
    grid = a.reshape(2, 3)
    words = a.view(np.int32)
    out[0] = grid[1, 2] + grid.T[0, 1] + words.size
    out[1] = a[::-1][0]


@cuda.jit
def parts(z, out):
    i = cuda.threadIdx.x
    cuda.atomic.add(z.real, i, 1)
    cuda.syncthreads()
    copy = z.copy()
    out[i] = copy[i].imag


@BOTH
def test_reshape_view_transpose_and_negative_steps(check):
    a = np.arange(6, dtype=np.int64)
    (_, out) = run(reshaped, (1, 1), a, np.zeros(2, np.int64), check=check)
    assert out.tolist() == [5 + 3 + 12, 5]


@BOTH
def test_real_imag_and_copy(check):
    z = np.arange(4) + 1j * np.arange(4)
    (_, out) = run(parts, (1, 4), z, np.zeros(4), check=check)
    assert z.real.tolist() == [1, 2, 3, 4] and out.tolist() == [0, 1, 2, 3]


@cuda.jit
def reshape_then_race(a):
    a.reshape(2, 2)[0, 0] = cuda.threadIdx.x


def test_views_are_checked_like_the_array():
    with pytest.raises(gpusim.WriteConflictError, match=r"a\[0\]"):
        run(reshape_then_race, (1, 2), np.zeros(4))


POINT = np.dtype([("x", np.float32), ("y", np.float32), ("tags", np.int16, (2,))], align=True)


@cuda.jit
def records(points, out):
    i = cuda.threadIdx.x
    p = points[i]
    if i == 0:
        p.x = 10.0  # thread 0 writes field x of the record whose field y thread 1 writes: no race
    if i == 1:
        points[0]["y"] = 20.0
    p.tags[1] = i
    out[i] = points.x[i]


@BOTH
def test_record_fields_by_attribute_by_name_and_nested_arrays(check):
    points = np.zeros(2, dtype=POINT)
    (points, out) = run(records, (1, 2), points, np.zeros(2, np.float32), check=check)
    assert points[0]["x"] == 10.0 and points[0]["y"] == 20.0 and points["tags"][:, 1].tolist() == [0, 1]


@cuda.jit
def record_argument(r, value):
    r.x = value


@BOTH
def test_a_record_argument_is_written_back(check):
    record = np.zeros(1, dtype=POINT)[0]
    run(record_argument, (1, 1), record, 3.5, check=check)
    assert record["x"] == 3.5


def doubled(x):
    """A Python function given to kernels through @overload."""


@overload(doubled, target="cuda")
def ol_doubled(x):
    def impl(x):
        return x * 2

    return impl


@cuda.jit
def uses_overload(a):
    a[0] = doubled(a[0])


@BOTH
def test_overloaded_functions_run_their_implementation(check):
    (a,) = run(uses_overload, (1, 1), np.array([21]), check=check)
    assert a[0] == 42


@dataclass(frozen=True)
class DeclaredDevice:
    """What cuda.declare_device gives under a simulator (as course/kernels/tensorcore.py declares)."""

    name: str
    signature: str


@stand_in("test_times3")
def times3(a):
    return np.int32(a * 3)


times3_linked = DeclaredDevice("test_times3", "int32(int32)")
not_modelled = DeclaredDevice("test_not_modelled", "int32(int32)")


@cuda.jit
def calls_linked(x):
    x[0] = times3_linked(x[0])


@cuda.jit
def calls_unmodelled(x):
    x[0] = not_modelled(x[0])


def test_linked_functions_run_their_registered_model_or_are_refused_by_name():
    (x,) = run(calls_linked, (1, 1), np.array([5], np.int32))
    assert x[0] == 15
    with pytest.raises(gpusim.UnsupportedError) as info:
        run(calls_unmodelled, (1, 1), x)
    assert info.value.feature == "the linked device function test_not_modelled (no model registered)"


@cuda.jit
def grid_sync(x, y):
    i = cuda.grid(1)
    g = cuda.cg.this_grid()
    x[i] = i
    g.sync()
    y[i] = x[(i + 1) % x.size]


def test_grid_sync_in_one_block_and_refused_in_several():
    (_, y) = run(grid_sync, (1, 4), np.zeros(4, np.int32), np.zeros(4, np.int32))
    assert y.tolist() == [1, 2, 3, 0]
    with pytest.raises(gpusim.UnsupportedError, match="in a launch of 2 blocks") as info:
        run(grid_sync, (2, 4), np.zeros(8, np.int32), np.zeros(8, np.int32))
    assert "grid-wide barrier" in info.value.feature


@cuda.jit
def tuple_of_arrays(pair, out):
    i = cuda.threadIdx.x
    out[i] = pair[0][i] + pair[1][i]


@BOTH
def test_a_tuple_of_arrays_argument(check):
    (_, out) = run(tuple_of_arrays, (1, 3), (np.arange(3.0), np.ones(3)), np.zeros(3), check=check)
    assert out.tolist() == [1.0, 2.0, 3.0]


class Colour(enum.IntEnum):
    RED = 1
    BLUE = 2


@cuda.jit
def enum_argument(colour, out):
    out[0] = colour == Colour.BLUE


@BOTH
def test_enum_arguments(check):
    (_, out) = run(enum_argument, (1, 1), Colour.BLUE, np.zeros(1, np.int32), check=check)
    assert out[0] == 1


@cuda.jit
def matches(values, any_out, all_out, same):
    lane = cuda.laneid
    any_out[lane] = cuda.match_any_sync(0xFFFFFFFF, values[lane])
    mask, pred = cuda.match_all_sync(0xFFFFFFFF, values[lane])
    all_out[lane] = mask
    same[lane] = cuda.eq_sync(0xFFFFFFFF, values[lane] > 0)


def test_match_and_eq_sync():
    values = np.arange(32) % 2
    outputs = np.zeros(32, np.uint32), np.zeros(32, np.int32), np.zeros(32, np.int32)
    (_, any_out, all_out, same) = run(matches, (1, 32), values, *outputs)
    assert any_out[0] == 0x55555555 and any_out[1] == 0xAAAAAAAA
    assert (all_out == 0).all() and (same == 0).all()


@cuda.jit
def compare_and_swap(x, old):
    old[cuda.threadIdx.x] = cuda.atomic.compare_and_swap(x, 0, cuda.threadIdx.x + 1)


def test_compare_and_swap_on_element_zero():
    (x, old) = run(compare_and_swap, (1, 4), np.zeros(2, np.int32), np.zeros(4, np.int32))
    assert x[0] == 1 and old.tolist() == [0, 1, 1, 1]


@cuda.jit
def libdevice_calls(x, s, c, fraction, exponent, sad):
    s[0], c[0] = libdevice.sincos(x[0])
    fraction[0], exponent[0] = libdevice.frexp(x[0])
    sad[0] = libdevice.sad(3, 7, 10)


@BOTH
def test_libdevice_functions_and_their_tuple_results(check):
    x = np.array([0.75])
    outputs = np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1, np.int32), np.zeros(1, np.int32)
    (_, s, c, fraction, exponent, sad) = run(libdevice_calls, (1, 1), x, *outputs, check=check)
    assert s[0] == np.sin(0.75) and c[0] == np.cos(0.75)
    assert (fraction[0], exponent[0]) == np.frexp(0.75) and sad[0] == 14


@cuda.jit
def small_things(index, a, out):
    out[0] = a[index[()]]  # a 0-d integer array as an index
    out[1] = math.trunc(float32(2.75))


@BOTH
def test_zero_d_index_and_trunc_of_float32(check):
    (_, _, out) = run(small_things, (1, 1), np.array(2), np.arange(5.0), np.zeros(2), check=check)
    assert out.tolist() == [2.0, 2.0]


@cuda.jit
def into_in_array(a):
    a[0] = 3


def test_an_array_passed_with_cuda_in_is_not_copied_back():
    kept, written = np.zeros(1), np.zeros(1)
    gpusim.jit(into_in_array)[1, 1](cuda.In(kept))
    gpusim.jit(into_in_array)[1, 1](cuda.InOut(written))
    assert kept[0] == 0 and written[0] == 3


@cuda.jit
def unknown_intrinsic(x):
    x[0] = cuda.not_an_intrinsic(x[0])


def test_an_unsupported_feature_is_refused_by_name():
    with pytest.raises(gpusim.UnsupportedError) as info:
        run(unknown_intrinsic, (1, 1), np.zeros(1))
    assert info.value.feature == "cuda.not_an_intrinsic"
    assert "gpusim does not simulate" in str(info.value)
