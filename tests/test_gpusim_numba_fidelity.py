"""gpusim gives a GPU's results where numba-cuda's own tests found it did not (issue #30): globals frozen when
Numba compiles, scalar arguments typed as Numba types them, the error model of debug=True, the result types
of warp intrinsics, timeouts in any thread; and no false alarm for stores of the value an element holds."""

import threading

import numpy as np
import pytest
from numba import cuda

import gpusim

SCALE = 10.0


@cuda.jit
def scaled(out):
    out[0] = SCALE * 2


def test_a_global_keeps_the_value_of_the_first_launch_as_numba_freezes_it():
    global SCALE
    out = np.zeros(1)
    gpusim.jit(scaled)[1, 1](out)
    SCALE = 20.0
    try:
        gpusim.jit(scaled)[1, 1](out)
        assert out[0] == 20.0  # frozen by the first compilation: SCALE was 10 then
        fresh = np.zeros(1, np.float32)  # other argument types: a new compilation reads SCALE again
        gpusim.jit(scaled)[1, 1](fresh)
        assert fresh[0] == 40.0
    finally:
        SCALE = 10.0


def test_a_new_jit_of_the_same_function_compiles_anew_and_reads_the_global_again():
    global SCALE
    out = np.zeros(1)
    gpusim.jit(scaled)[1, 1](out)
    SCALE = 30.0
    try:
        again = cuda.jit(gpusim.python_function(scaled))  # a new dispatcher: Numba compiles it for itself
        gpusim.jit(again)[1, 1](out)
        assert out[0] == 60.0
        gpusim.jit(scaled)[1, 1](out)  # the first dispatcher keeps what it froze
        assert out[0] == 20.0
    finally:
        SCALE = 10.0


@cuda.jit
def divide(out, x, y):
    out[0] = x / y
    out[1] = 1


@cuda.jit(debug=True)
def divide_debug(out, x, y):
    out[0] = x / y
    out[1] = 1


@pytest.mark.parametrize("check", [True, False])
def test_a_float_argument_is_a_float64_and_dividing_by_zero_gives_inf(check):
    out = np.zeros(2)
    gpusim.jit(divide, check=check)[1, 1](out, 1.0, 0.0)
    assert np.isinf(out[0]) and out[1] == 1


@pytest.mark.parametrize("check", [True, False])
def test_with_debug_true_dividing_by_zero_raises_zero_division_error(check):
    out = np.zeros(2)
    with pytest.raises(gpusim.KernelException) as info:
        gpusim.jit(divide_debug, check=check)[1, 1](out, 1.0, 0.0)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert out[1] == 0  # the kernel stopped at the division


@cuda.jit
def votes(ballots, kinds, masks):
    lane = cuda.laneid
    ballot = cuda.ballot_sync(0xFFFFFFFF, True)
    ballots[lane] = ballot
    mask = cuda.activemask()
    if lane == 0:
        kinds[0] = ballot < 0  # an int32 with every bit set, as numba-cuda types ballot_sync
        kinds[1] = mask > 0  # a uint32
        masks[0] = mask


def test_warp_intrinsics_return_numba_cudas_types():
    ballots, kinds, masks = np.zeros(32, np.int32), np.zeros(2, np.int32), np.zeros(1, np.uint32)
    gpusim.jit(votes)[1, 32](ballots, kinds, masks)
    assert (ballots == -1).all()  # all 32 bits set, stored as an int32: -1, not an OverflowError
    assert kinds.tolist() == [1, 1] and masks[0] == 0xFFFFFFFF


@cuda.jit
def spin(out):
    x = 0
    while x >= 0:
        x += 1
    out[0] = x


def test_the_timeout_stops_a_launch_made_outside_the_main_thread():
    caught = []

    def launch():
        try:
            gpusim.jit(spin, check=False, engine="thread", timeout=0.5)[1, 1](np.zeros(1, np.int64))
        except gpusim.KernelTimeoutError as error:
            caught.append(error)

    worker = threading.Thread(target=launch, daemon=True)
    worker.start()
    worker.join(60)
    assert len(caught) == 1 and "timeout of 0.5 s" in str(caught[0])


@cuda.jit
def everyone_writes_one(x):
    x[0] = 1


@cuda.jit
def everyone_writes_own_index(x):
    x[0] = cuda.threadIdx.x


@cuda.jit
def restore_while_others_read(x, out):
    i = cuda.threadIdx.x
    if i == 0:
        x[0] = x[0]
    out[i] = x[0]


@pytest.mark.parametrize("blocks", [1, 3])
def test_threads_storing_one_value_in_one_element_is_no_race_by_default(blocks):
    x = np.zeros(1, np.int32)
    gpusim.jit(everyone_writes_one)[blocks, 32](x)
    assert x[0] == 1


def test_strict_reports_same_value_stores_and_says_why():
    with pytest.raises(gpusim.WriteConflictError, match="strict=True"):
        gpusim.jit(everyone_writes_one, strict=True)[1, 32](np.zeros(1, np.int32))


def test_re_storing_the_value_others_read_is_no_race_by_default_but_is_under_strict():
    x, out = np.full(1, 7, np.int32), np.zeros(32, np.int32)
    gpusim.jit(restore_while_others_read)[1, 32](x, out)
    assert (out == 7).all()
    with pytest.raises(gpusim.RaceError):
        gpusim.jit(restore_while_others_read, strict=True)[1, 32](x, out)


def test_different_values_in_one_element_are_still_a_write_conflict():
    with pytest.raises(gpusim.WriteConflictError) as info:
        gpusim.jit(everyone_writes_own_index)[1, 32](np.zeros(1, np.int32))
    assert "strict" not in str(info.value)


def make_fib():
    @cuda.jit(device=True)
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    return fib


fib = make_fib()


@cuda.jit
def fibs(out):
    out[cuda.threadIdx.x] = fib(cuda.threadIdx.x)


def test_a_recursive_device_function_defined_in_a_closure_runs():
    out = np.zeros(8, np.int64)
    gpusim.jit(fibs)[1, 8](out)
    assert out.tolist() == [0, 1, 1, 2, 3, 5, 8, 13]


TWELVE_BYTES = np.dtype([("a", np.int32), ("b", np.float32), ("c", np.int32)])


@cuda.jit
def shared_records(out):
    s = cuda.shared.array(3, dtype=TWELVE_BYTES)
    i = cuda.threadIdx.x
    if i < 3:
        s[i].a = i
        s[i].b = 0.5 * i
    cuda.syncthreads()
    if i < 3:
        out[cuda.blockIdx.x * 3 + i] = s[i].a + s[i].b


def test_shared_records_of_twelve_bytes_in_several_blocks():
    out = np.zeros(6, np.float32)
    gpusim.jit(shared_records)[2, 4](out)
    assert out.tolist() == [0.0, 1.5, 3.0, 0.0, 1.5, 3.0]
