"""Threads that hand data over through flags: polls switch threads, a wait nobody can end is a deadlock,
fences order the data, and a protocol without them (or in the wrong order) is a race that says what is
missing."""

import flag_kernels as F
import numpy as np
import pytest

import gpusim

X = np.arange(6 * F.W, dtype=np.float32).reshape(1, -1)


def ring(variant, check=True, x=X, **options):
    out = np.zeros_like(x)
    gpusim.jit(F.make_ring(variant), check=check, timeout=20, **options)[x.shape[0], 2 * F.W](x, out)
    return out


def ring_error(variant):
    with pytest.raises(gpusim.KernelError) as info:
        ring(variant)
    message = str(info.value)
    assert message.splitlines()[-1].startswith("Hint: ")
    return info.value, message


@pytest.mark.parametrize("schedule,seed", [("sequential", None), ("random", 1), ("random", 2), ("random", 3)])
def test_right_protocol_hands_every_tile_over_without_a_race(schedule, seed):
    np.testing.assert_array_equal(ring("right", schedule=schedule, seed=seed), 2 * X)


def test_right_protocol_runs_unchecked_too():
    np.testing.assert_array_equal(ring("right", check=False), 2 * X)


def test_right_protocol_in_every_block_of_a_grid():
    x = np.random.default_rng(0).random((3, 4 * F.W), dtype=np.float32)
    out = np.zeros_like(x)
    kernel = gpusim.jit(F.make_ring("right"), timeout=20)
    kernel[3, 2 * F.W](x, out)
    np.testing.assert_array_equal(out, 2 * x)
    assert kernel.report.max_block_barriers == 1 and kernel.report.shared_loads >= x.size


def test_fences_do_not_leak_into_the_count_of_warp_collectives():
    kernel = gpusim.jit(F.make_ring("right"), timeout=20)
    kernel[1, 2 * F.W](X, np.zeros_like(X))
    assert kernel.report.max_thread_collectives == 0  # the ring uses fences and atomics, no collective


def test_missing_producer_fence_names_the_write_the_read_and_the_flag_update():
    error, message = ring_error("no_producer_fence")
    assert isinstance(error, gpusim.FlagRaceError) and isinstance(error, gpusim.RaceError)
    assert message.startswith("block (0,0,0): thread (0,0,0) wrote ring[0, 0] at flag_kernels.py:")
    assert "thread (32,0,0) read ring[0, 0]" in message
    assert "`out[row, k * W + lane] = ring[s, lane]`" in message
    assert "thread (0,0,0) updated a flag at flag_kernels.py:" in message
    assert "`cuda.atomic.add(full, s, 1)`" in message
    assert "with no cuda.threadfence_block() in between" in message


def test_missing_consumer_fence_names_the_poll_that_needs_one():
    error, message = ring_error("no_consumer_fence")
    assert isinstance(error, gpusim.FlagRaceError)
    assert "thread (32,0,0) saw the flag update" in message
    assert "`while cuda.atomic.add(full, s, 0) < target:`" in message
    assert "did not call cuda.threadfence_block() between that atomic and its own access" in message


def test_flag_raised_before_the_data_is_written():
    error, message = ring_error("flag_before_data")
    assert isinstance(error, gpusim.FlagRaceError)
    assert "thread (32,0,0) read ring[0, 0]" in message and "thread (0,0,0) wrote ring[0, 0]" in message
    assert "updates the flag before it writes the data" in message


def test_producer_that_never_waits_for_an_empty_slot():
    error, message = ring_error("producer_never_waits")
    assert isinstance(error, gpusim.FlagRaceError)
    assert "thread (0,0,0) overwrote this element without first waiting" in message


def test_waiting_for_a_value_nobody_writes_is_a_deadlock_with_both_sides_named():
    error, message = ring_error("consumer_waits_too_long")
    assert isinstance(error, gpusim.DeadlockError) and isinstance(error, gpusim.BarrierError)
    assert message.startswith("block (0,0,0) cannot continue: every thread that can still run waits")
    assert "32 threads (0,0,0)" in message and "poll empty[0] at flag_kernels.py:" in message
    assert "32 threads (32,0,0)" in message and "poll full[0]" in message and "it holds 32" in message


def test_deadlock_lists_threads_at_a_barrier():
    with pytest.raises(gpusim.DeadlockError) as info:
        gpusim.jit(F.waits_for_nobody, timeout=20)[1, 2 * F.W](np.zeros(2 * F.W, np.float32))
    message = str(info.value)
    assert "32 threads (32,0,0)" in message and "poll flag[0]" in message and "it holds 0" in message
    assert "32 threads (0,0,0)" in message and "(syncthreads)" in message


def test_unchecked_deadlock_runs_into_the_timeout_and_names_the_pollers():
    with pytest.raises(gpusim.KernelTimeoutError) as info:
        gpusim.jit(F.waits_for_nobody, check=False, timeout=3)[1, 2 * F.W](np.zeros(2 * F.W, np.float32))
    assert "were waiting in loops that poll element 0" in str(info.value)


def test_a_warp_collective_carries_the_handover_to_every_lane():
    out = np.zeros(F.W, np.float32)
    gpusim.jit(F.warp_handover, timeout=20)[1, 2 * F.W](X[0, : F.W], out)
    np.testing.assert_array_equal(out, X[0, : F.W] + 1)


def test_a_race_after_the_protocol_and_a_barrier_is_an_ordinary_race():
    with pytest.raises(gpusim.RaceError) as info:
        ring("barrier_after")
    assert not isinstance(info.value, gpusim.FlagRaceError)
    assert "no cuda.syncthreads() between them" in str(info.value)


def test_polling_with_a_plain_load_times_out_and_says_to_poll_with_an_atomic():
    with pytest.raises(gpusim.KernelTimeoutError) as info:
        gpusim.jit(F.plain_read_spin, timeout=3)[1, 32](np.zeros(32, np.float32))
    message = str(info.value)
    assert "Thread (0,0,0) was reading flag[0] over and over at flag_kernels.py:" in message
    assert "`while flag[0] == 0:`" in message and "cuda.atomic.add(flags, i, 0)" in message


def test_a_flag_raised_with_a_plain_store_is_a_race_with_the_atomic_poll():
    with pytest.raises(gpusim.RaceError) as info:
        gpusim.jit(F.plain_store_flag, timeout=20)[1, 2 * F.W](X[0, : F.W], np.zeros(F.W, np.float32))
    message = str(info.value)
    assert "flag[0]" in message and "atomically updated" in message
    assert "must be read and written with atomics too" in message


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("kernel", [F.atomic_max_strided, F.shared_max_strided], ids=lambda k: k.__name__)
def test_atomics_that_change_nothing_in_ordinary_kernels_are_not_deadlocks(kernel, check):
    x = np.full(4096, 3.0, np.float32)
    x[-1] = 5.0
    out = np.full(1, -1.0, np.float32)
    gpusim.jit(kernel, check=check, timeout=20)[1, 64](x, out)
    assert out[0] == 5.0


# --- happens-before under adversarial schedules: an acquire synchronises with the writes its poll saw


@pytest.mark.parametrize("schedule", gpusim.schedules(2 * F.W), ids=lambda s: s.name)
def test_right_protocol_is_clean_under_every_schedule_of_the_set(schedule):
    np.testing.assert_array_equal(ring("right", schedule=schedule), 2 * X)


@pytest.mark.parametrize("schedule", [("hold", 0), ("hold", 1), ("delay", 1)])
def test_right_protocol_runs_unchecked_under_adversarial_schedules(schedule):
    np.testing.assert_array_equal(ring("right", check=False, schedule=schedule), 2 * X)


def test_consumer_that_waits_for_one_producer_lane_is_a_race_once_its_fences_are_delayed():
    """Family 1: the consumer goes on when one producer lane has added to full[s]. In the default order every
    lane has filled the slot by then; delaying the consumer's fences lets it poll after the first lane's
    update, and its poll, which read 1, synchronised with that lane only."""
    np.testing.assert_array_equal(ring("consumer_waits_for_one_lane"), 2 * X)
    out = np.zeros_like(X)
    with pytest.raises(gpusim.FlagRaceError) as info:
        gpusim.run_schedules(F.make_ring("consumer_waits_for_one_lane"), (1, 2 * F.W), X, out, timeout=20)
    message = str(info.value)
    assert message.startswith("Under the schedule 'delay warp 1 at its fences' (warp 1 runs ahead")
    assert "thread (1,0,0) wrote ring[0, 1]" in message and "thread (33,0,0) read ring[0, 1]" in message
    assert "thread (33,0,0) polled full[0] at flag_kernels.py:" in message
    assert "went on when it read 1, before thread (1,0,0) updated that flag" in message
    assert "`cuda.atomic.add(full, s, 1)`" in message and "stopped waiting too soon" in message


def test_producer_that_waits_a_round_early_is_a_race_once_the_consumer_is_delayed():
    """Family 2: the producer refills a slot after the consumer's count of the round before the previous
    one. The default order never lets it get that far ahead; delaying the consumer's fences does, and the
    consumer's poll synchronised with the producer's first fill of the slot only, not with the refill."""
    np.testing.assert_array_equal(ring("producer_waits_a_round_early"), 2 * X)
    error, message = _delayed_consumer_error("producer_waits_a_round_early")
    assert isinstance(error, gpusim.FlagRaceError)
    assert message.startswith("block (0,0,0): thread (0,0,0) wrote ring[0, 0] at flag_kernels.py:")
    assert "thread (32,0,0) read ring[0, 0]" in message
    assert "`out[row, k * W + lane] = ring[s, lane]`" in message
    assert "thread (0,0,0) wrote this element again before thread (32,0,0) had used the value" in message
    assert "the buffer was refilled before its reader released it" in message


def test_producer_a_round_early_loses_tiles_when_the_consumer_is_held_back():
    """Held back, the consumer starts after the producer has filled each slot twice: no race (each read is
    ordered after the write it reads), but the first tile the consumer copies is the third."""
    out = ring("producer_waits_a_round_early", schedule=("hold", 1))
    np.testing.assert_array_equal(out[0, : F.W], 2 * X[0, 2 * F.W: 3 * F.W])


def _delayed_consumer_error(variant):
    with pytest.raises(gpusim.KernelError) as info:
        ring(variant, schedule=("delay", 1))
    return info.value, str(info.value)
