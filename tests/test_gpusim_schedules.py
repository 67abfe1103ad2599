"""Schedules: which thread runs next. The set a check runs, what "hold", "ahead" and "delay" do to the order
of threads, and the sweep that runs a launch under every schedule and names the one that shows a bug."""

import gpusim_kernels as K
import numpy as np
import pytest
from numba import cuda

import gpusim


@cuda.jit
def arrival_order(before, after, counters):
    """Each thread takes a ticket on arrival, before and after a barrier: the order threads ran in."""
    t = cuda.threadIdx.x
    before[cuda.atomic.add(counters, 0, 1)] = t
    cuda.syncthreads()
    after[cuda.atomic.add(counters, 1, 1)] = t


@cuda.jit
def last_writer(out):
    """Every thread exchanges its index into out[0]: the last one to run wins, without a race."""
    cuda.atomic.exch(out, 0, cuda.threadIdx.x)


def arrivals(threads, schedule, seed=None):
    before, after = np.zeros(threads, np.int32), np.zeros(threads, np.int32)
    gpusim.jit(arrival_order, schedule=schedule, seed=seed)[1, threads](before, after, np.zeros(2, np.int32))
    return before, after


def test_the_set_is_the_default_then_each_warps_adversarial_schedules_then_random_ones():
    names = [schedule.name for schedule in gpusim.schedules(64, randoms=2, seed=5)]
    assert names == ["sequential", "delay warp 0 at its fences", "delay warp 1 at its fences",
                     "hold warp 0 back", "hold warp 1 back", "random (seed 5)", "random (seed 6)"]
    three_warps = [schedule.kind for schedule in gpusim.schedules((32, 3), randoms=0)]
    assert three_warps == ["sequential"] + ["delay"] * 3 + ["hold"] * 3 + ["ahead"] * 3
    assert [s.name for s in gpusim.schedules(32, randoms=1)] == ["sequential", "random (seed 0)"]


@pytest.mark.parametrize("schedule",
                         ["backwards", ("hold",), ("hold", -1), ("ahead", True), ("sequential", 1)])
def test_an_unknown_schedule_is_refused(schedule):
    with pytest.raises(ValueError, match="schedule"):
        gpusim.jit(K.vector_add, schedule=schedule)


def test_holding_a_warp_back_runs_it_last_in_every_phase():
    order = np.r_[32:64, 0:32]
    for phase in arrivals(64, ("hold", 0)):
        np.testing.assert_array_equal(phase, order)
    for phase in arrivals(64, "sequential"):
        np.testing.assert_array_equal(phase, np.arange(64))


def test_running_a_warp_ahead_runs_it_first_and_the_others_in_order():
    for phase in arrivals(96, ("ahead", 2)):
        np.testing.assert_array_equal(phase, np.r_[64:96, 0:64])


def test_a_warp_the_block_does_not_have_changes_nothing():
    for phase in arrivals(64, ("hold", 5)):
        np.testing.assert_array_equal(phase, np.arange(64))


def test_random_takes_its_seed_in_the_tuple_too():
    shuffled = arrivals(64, "random", seed=4)
    assert not np.array_equal(shuffled[0], np.arange(64))
    for tuple_form, keyword_form in zip(arrivals(64, ("random", 4)), shuffled, strict=True):
        np.testing.assert_array_equal(tuple_form, keyword_form)


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("schedule", gpusim.schedules(256, randoms=1), ids=lambda s: s.name)
def test_a_barrier_kernel_gives_the_same_result_under_every_schedule_on_the_thread_engine(schedule, check):
    rng = np.random.default_rng(3)
    A, B = rng.random((32, 32), dtype=np.float32), rng.random((32, 32), dtype=np.float32)
    C = np.zeros((32, 32), dtype=np.float32)
    kernel = gpusim.jit(K.matmul_tiled, schedule=schedule, check=check)
    kernel[(2, 2), (16, 16)](A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)
    if schedule.kind != "sequential":
        assert kernel.engine_used == "thread" and kernel.fallback == f"the schedule {schedule.name!r}"


def test_the_sweep_runs_every_schedule_and_leaves_the_default_result():
    rng = np.random.default_rng(4)
    A, B = rng.random((32, 32), dtype=np.float32), rng.random((32, 32), dtype=np.float32)
    C = np.zeros((32, 32), dtype=np.float32)
    ran = gpusim.run_schedules(K.matmul_tiled, ((2, 2), (16, 16)), A, B, C, randoms=2, rtol=1e-6)
    assert ran == gpusim.schedules(256, randoms=2)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)


def test_a_result_that_depends_on_the_schedule_is_a_schedule_error():
    out = np.full(1, -1, np.int32)
    with pytest.raises(gpusim.ScheduleError) as info:
        gpusim.run_schedules(last_writer, (1, 64), out)
    message = str(info.value)
    assert message.startswith("under the schedule 'delay warp 1 at its fences' (warp 1 runs ahead")
    assert "out[0] is 31 there and 63 under the default schedule" in message
    assert "no check found a race" in message
    assert out[0] == 63  # the default schedule's result


def test_the_sweep_names_the_schedule_of_the_first_error_and_keeps_its_class():
    A, B, C = (np.ones((16, 16), np.float32) for _ in range(3))
    with pytest.raises(gpusim.RaceError) as info:
        gpusim.run_schedules(K.matmul_no_sync_after_load, ((1, 1), (16, 16)), A, B, C)
    assert str(info.value).startswith("Under the schedule 'sequential' (threads in order")
