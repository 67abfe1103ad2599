"""The course models of Part 8: the systolic array computes X @ W in the cycles its formula counts, and the
pipeline model's timelines add up as the lesson derives them."""

import numpy as np
import pytest

from course.models import pictures, pipeline, systolic

SHAPES = [(1, 1, 1, 1, 1), (3, 4, 4, 4, 4), (5, 3, 2, 4, 4), (7, 9, 5, 4, 3), (2, 13, 11, 5, 4),
          (6, 4, 9, 2, 8)]


@pytest.mark.parametrize("m,k,n,rows,cols", SHAPES)
def test_array_computes_the_product_in_the_counted_cycles(m, k, n, rows, cols):
    rng = np.random.default_rng(m * 100 + k)
    X, W = rng.uniform(-2, 2, (m, k)), rng.uniform(-2, 2, (k, n))
    clocks = []

    def counting_step(weights, a, s, x_left):
        clocks.append(1)
        return systolic.step(weights, a, s, x_left)

    Y, counts = systolic.matmul(X, W, rows, cols, step=counting_step)
    np.testing.assert_allclose(Y, X @ W, rtol=1e-12, atol=1e-12)
    assert len(clocks) == counts.cycles == systolic.cycle_count(m, k, n, rows, cols)
    assert counts.passes == -(-k // rows) * -(-n // cols) and counts.macs == m * k * n
    assert counts.utilisation == pytest.approx(systolic.utilisation(m, k, n, rows, cols))


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (4, 4, 4), (3, 5, 2), (6, 2, 7)])
def test_a_pass_ends_with_its_last_output_and_counts_every_useful_multiply_add(m, k, n):
    rng = np.random.default_rng(k)
    states = systolic.trace(rng.random((m, k)), rng.random((k, n)))
    assert len(states) == systolic.pass_cycles(m, k, n) == m + k + n - 2
    assert (m - 1) in states[-1].out and (n - 1) in states[-1].out[m - 1]
    assert all(n - 1 not in state.out.get(m - 1, {}) for state in states[:-1])
    assert sum(int(state.busy.sum()) for state in states) == m * k * n


def test_skewed_feed_enters_row_i_at_cycle_m_plus_i():
    X = np.arange(1, 7, dtype=float).reshape(2, 3)  # vectors [1, 2, 3] and [4, 5, 6]
    columns = [systolic.feed(X, cycle, 4).tolist() for cycle in range(5)]
    assert columns == [[1, 0, 0, 0], [4, 2, 0, 0], [0, 5, 3, 0], [0, 0, 6, 0], [0, 0, 0, 0]]


def test_a_small_problem_underuses_a_big_array():
    assert systolic.utilisation(4096, 4096, 4096, 256, 256) > 0.85
    assert systolic.utilisation(64, 64, 64, 256, 256) < 0.01
    assert systolic.utilisation(64, 257, 257, 256, 256) < systolic.utilisation(64, 256, 256, 256, 256) / 3


@pytest.mark.parametrize("m,k,n,rows,cols", [(6, 4, 4, 4, 4), (5, 7, 3, 4, 4), (9, 4, 10, 3, 4),
                                            (2, 9, 9, 4, 4), (1, 1, 1, 1, 1)])
def test_streamed_passes_pay_the_latency_once_and_last_at_least_a_weight_shift(m, k, n, rows, cols):
    """Passes back to back: each lasts max(M, rows) cycles (a tile's weights take rows cycles to shift in),
    plus one latency of rows + cols - 2 for the product: with M >= rows, the sequential count less one latency
    per extra pass."""
    count = systolic.passes(k, n, rows, cols)
    streamed = systolic.cycle_count_overlapped(m, k, n, rows, cols)
    assert streamed == count * max(m, rows) + rows + cols - 2
    if m >= rows:
        assert streamed == systolic.cycle_count(m, k, n, rows, cols) - (count - 1) * (rows + cols - 2)
    else:
        assert streamed > count * m + rows + cols - 2  # bound by the weight shifts, not the vectors


def test_a_large_product_streamed_fills_the_array_and_small_arrays_waste_less_on_thin_shapes():
    assert systolic.utilisation(4096, 4096, 4096, 256, 256, overlapped=True) > 0.99
    assert systolic.utilisation(4096, 4096, 4096, 256, 256) < 0.9  # one latency per pass
    thin = (4096, 64, 4096)  # Part 7's scores Q K^T: 64 weight rows
    assert systolic.utilisation(*thin, 128, 128, overlapped=True) > 1.9 * systolic.utilisation(
        *thin, 256, 256, overlapped=True)


def test_one_buffer_serialises_load_and_compute_and_two_overlap_them():
    load, compute = pipeline.Stage("load", 3.0), pipeline.Stage("compute", 2.0)
    store = pipeline.Stage("store", 1.0)
    one = pipeline.schedule(8, load, compute, store, buffers=1)
    two = pipeline.schedule(8, load, compute, store, buffers=2)
    assert pipeline.total_time(one) == 8 * (3 + 2) + 1
    assert pipeline.total_time(two) == 3 + 8 * 3 - 3 + 2 + 1  # loads back to back, the last tile's tail
    assert pipeline.speedup(8, load, compute, store) == pytest.approx(41 / 27)
    assert {e.buffer for e in two if e.stage == "load"} == {0, 1}
    assert pipeline.busy_fraction(two, "load") == pytest.approx(24 / 27)


def test_deeper_pipelines_pay_when_a_load_has_more_latency_than_interval():
    load, compute = pipeline.Stage("load", 6.0, interval=1.0), pipeline.Stage("compute", 2.0)
    totals = [pipeline.total_time(pipeline.schedule(16, load, compute, buffers=b)) for b in (1, 2, 3, 4, 8)]
    # B buffers: groups of B tiles every load + compute = 8, until the compute unit is busy all the time
    assert totals == [16 * 8, 7 * 8 + 8 + 2, 5 * 8 + 6 + 2, 6 + 16 * 2, 6 + 16 * 2]


def test_events_respect_the_buffers_and_the_units():
    load, compute = pipeline.Stage("load", 5.0, interval=2.0), pipeline.Stage("compute", 3.0)
    for buffers in (1, 2, 3):
        events = pipeline.schedule(10, load, compute, buffers=buffers)
        loads = [e for e in events if e.stage == "load"]
        computes = [e for e in events if e.stage == "compute"]
        for k in range(10):
            assert computes[k].start >= loads[k].end
            if k:
                assert computes[k].start >= computes[k - 1].end and loads[k].start >= loads[k - 1].start + 2.0
            if k >= buffers:
                assert loads[k].start >= computes[k - buffers].end


def test_a_metapipeline_with_double_buffers_runs_at_the_pace_of_its_slowest_stage():
    stages = [pipeline.Stage(name, t) for name, t in (("load", 2.0), ("diff", 3.0), ("square", 1.0),
                                                       ("store", 2.0))]
    double = pipeline.chain(10, stages, [2, 2, 2])
    assert pipeline.total_time(double) == 2 + 3 + 1 + 2 + 9 * 3
    single = pipeline.chain(10, stages, [1, 1, 1])
    assert pipeline.total_time(single) > pipeline.total_time(double)
    with pytest.raises(ValueError):
        pipeline.chain(3, stages, [2, 2])


def test_pictures_say_what_they_show():
    W = np.arange(1.0, 10.0).reshape(3, 3)
    X = np.ones((2, 3))
    picture = pictures.systolic_cycle(X, W, 2)
    assert picture.facts["busy"] == 5 and picture.facts["cycles"] == 6 and picture.png()[:4] == b"\x89PNG"
    strip = pictures.systolic_strip(X, W)
    assert strip.facts["busy"] == {0: 1, 1: 3, 2: 5, 3: 5, 4: 3, 5: 1}
    load, compute = pipeline.Stage("load", 3.0), pipeline.Stage("compute", 2.0)
    rows = [(f"{b} buffers", pipeline.schedule(4, load, compute, buffers=b)) for b in (1, 2)]
    assert pictures.timelines(rows).facts["ends"] == {"1 buffers": 20.0, "2 buffers": 14.0}
