"""gpusim.viz: every view rendered headless (Agg) for small kernels, and its content checked."""

import importlib
import sys

import numpy as np
import pytest
from notebook_runs import ROOT
from numba import cuda, float32

import gpusim
from gpusim import viz
from gpusim.viz import widgets as viz_widgets

ARTIFACTS = ROOT / "test-artifacts" / "viz"


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def fill_2d(out):
    row, col = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = row * out.shape[1] + col


@cuda.jit
def block_sum(x, out):
    s = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    step = 4
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def block_sum_no_first_barrier(x, out):
    s = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.grid(1)]
    step = 4
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def strided_copy(x, out, stride):
    i = cuda.grid(1)
    out[i] = x[(i * stride) % x.size]


@cuda.jit
def transpose_tile(x, out):
    tile = cuda.shared.array((32, 32), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile[ty, tx] = x[ty, tx]
    cuda.syncthreads()
    out[ty, tx] = tile[tx, ty]  # a column of the tile: all 32 lanes in one bank


def vector(n, start=0.0):
    return np.arange(start, start + n, dtype=np.float32)


def highlighted_patches(view, gid="highlight"):
    return [p for ax in view.axes for p in ax.patches if p.get_gid() == gid]


def is_png(view, name=None):
    """True when the view renders to PNG; with a name, the picture is also kept in test-artifacts/viz/."""
    png = view._repr_png_()
    if name:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"{name}.png").write_bytes(png)
    return png.startswith(b"\x89PNG")


# --- thread map ---------------------------------------------------------------------------------


def test_thread_map_highlights_exactly_the_chosen_threads_elements_1d():
    args = (vector(10), vector(10, 100), np.zeros(10, np.float32))
    view = viz.thread_map(add, 3, 4, args, block_id=1, thread=2)
    assert view.facts["highlighted"] == {"a": [6], "b": [6], "out": [6]}
    assert "reads a[6], b[6]; writes out[6]" in view.facts["caption"]
    assert len(highlighted_patches(view)) == 3 and is_png(view, "thread_map_1d")
    assert np.all(args[2] == 0), "the view runs the kernel on copies and leaves the caller's arrays alone"


def test_thread_map_colours_elements_by_block_and_skips_threads_past_the_end():
    rec = viz.record(add, 3, 4, (vector(10), vector(10), np.zeros(10, np.float32)))
    owner_block, owner_thread, counts = importlib.import_module("gpusim.viz.thread_map").owners(rec, "out")
    assert owner_block.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert owner_thread.tolist() == [0, 1, 2, 3] * 2 + [0, 1] and counts.max() == 1
    assert viz.touched(rec, block=2, thread=3) == {}, "thread 11 is past n = 10 and touches nothing"
    assert np.array_equal(rec.outputs["out"], 2 * vector(10))


def test_thread_map_2d_uses_row_and_column_indices():
    args = (np.zeros((6, 10), np.float32),)
    view = viz.thread_map(fill_2d, (2, 3), (4, 4), args, block_id=(1, 2), thread=(0, 1))
    assert view.facts["highlighted"] == {"out": [(4, 9)]} and is_png(view, "thread_map_2d")
    whole_block = viz.touched(viz.record(fill_2d, (2, 3), (4, 4), args), (1, 2))
    assert sorted(whole_block["out"]) == [(4, 8), (4, 9), (5, 8), (5, 9)], "guarded: no row 6, no column 10"


def test_thread_map_widget_slider_moves_the_highlight():
    widget = viz.thread_map_widget(add, 3, 4, (vector(10), vector(10), np.zeros(10, np.float32)))
    assert "writes out[0]" in widget.caption.value
    widget.controls["thread"].value = 3
    assert "writes out[3]" in widget.caption.value
    assert 'data-facts="block (0, 0), thread (3, 0)' in widget.caption.value
    widget.controls["block_id"].value = 2
    assert "thread (3, 0): touches nothing" in widget.caption.value
    assert bytes(widget.image.value).startswith(b"\x89PNG")


def test_views_are_static_figures_without_ipywidgets(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # makes `import ipywidgets` fail
    assert not viz_widgets.have_widgets()
    args = (vector(10), vector(10), np.zeros(10, np.float32))
    assert isinstance(viz.thread_map_widget(add, 3, 4, args), viz.View)
    sums = (vector(16), np.zeros(2, np.float32))
    assert isinstance(viz.phase_stepper_widget(block_sum, 2, 8, sums), viz.View)
    warp = (vector(32), vector(32), np.zeros(32, np.float32))
    assert isinstance(viz.memory_access_widget(add, 1, 32, warp), viz.View)
    assert isinstance(viz.wave_view_widget(), viz.View)


# --- phase stepper ------------------------------------------------------------------------------


def test_phase_stepper_shows_what_each_phase_reads_and_writes():
    view = viz.phase_stepper(block_sum, 2, 8, (vector(16), np.zeros(2, np.float32)), block_id=1)
    assert view.facts["phases"] == [0, 1, 2, 3, 4] and view.facts["races"] == {}
    phases = viz.phase_accesses(viz.record(block_sum, 2, 8, (vector(16), np.zeros(2, np.float32))), 1)
    assert {i for i, (_, writers) in phases[0]["s"].items() if writers} == set(range(8))
    assert {i: (sorted(r), sorted(w)) for i, (r, w) in phases[2]["s"].items()} == {
        0: ([0], [0]), 1: ([1], [1]), 2: ([0], []), 3: ([1], [])}
    assert len(view.axes) == 5 and is_png(view, "phases_block_sum")


def test_phase_stepper_marks_a_race_in_red():
    view = viz.phase_stepper(block_sum_no_first_barrier, 2, 8, (vector(16), np.zeros(2, np.float32)))
    assert "RaceError" in view.texts[0].get_text() or "RaceError" in view._suptitle.get_text()
    assert "wrote s[4]" in view.facts["error"]
    assert view.facts["races"] == {0: {"s": [4, 5, 6, 7]}}
    assert len(highlighted_patches(view, "race")) == 4 and is_png(view, "phases_race")
    red = viz.phases.RACE
    image = view.axes[0].images[0].get_array()
    assert [tuple(image[0, c]) == red for c in range(8)] == [False] * 4 + [True] * 4


def test_phase_stepper_single_phase_of_a_tiled_matmul():
    tile = 4

    @cuda.jit
    def matmul(a, b, c):
        sA = cuda.shared.array((tile, tile), float32)
        sB = cuda.shared.array((tile, tile), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row, col = cuda.blockIdx.y * tile + ty, cuda.blockIdx.x * tile + tx
        acc = float32(0.0)
        for k0 in range(0, a.shape[1], tile):
            sA[ty, tx] = a[row, k0 + tx]
            sB[ty, tx] = b[k0 + ty, col]
            cuda.syncthreads()
            for j in range(tile):
                acc += sA[ty, j] * sB[j, tx]
            cuda.syncthreads()
        c[row, col] = acc

    a, b = np.ones((8, 8), np.float32), np.ones((8, 8), np.float32)
    view = viz.phase_stepper(matmul, (2, 2), (4, 4), (a, b, np.zeros((8, 8), np.float32)), phase=1)
    assert [ax.get_title() for ax in view.axes] == ["phase 1: sA", "phase 1: sB"]
    assert view.facts["phases"] == [0, 1, 2, 3, 4] and view.facts["races"] == {}
    assert is_png(view, "phases_tiled_matmul")


# --- memory access view -------------------------------------------------------------------------


@pytest.mark.parametrize("stride", [1, 2, 4, 32])
def test_sector_counts_match_the_report(stride):
    rec = viz.record(strided_copy, 2, 64, (vector(4096), np.zeros(128, np.float32), stride))
    counts = viz.access_counts(rec)
    assert counts["global_sectors"] == rec.report.global_sectors
    assert counts["global_requests"] == rec.report.global_requests
    view = viz.memory_access(rec, warp=0, request=0)  # the read of x
    assert view.facts["sectors"] == min(32, 4 * stride) and view.facts["counted"] == "sectors"
    assert is_png(view, f"memory_global_stride{stride}")


def test_bank_conflicts_match_the_report():
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    rec = viz.record(transpose_tile, 1, (32, 32), (x, np.zeros_like(x)))
    counts = viz.access_counts(rec)
    assert counts["bank_conflicts"] == rec.report.bank_conflicts == 32 * 31
    assert counts["shared_requests"] == rec.report.shared_requests
    column_read = [r for r in viz.requests(rec, 0, 5) if r.space == "shared" and r.kind == "read"][0]
    index = viz.requests(rec, 0, 5).index(column_read)
    view = viz.memory_access(rec, warp=5, request=index)
    assert view.facts["bank_conflicts"] == 31 and view.facts["counted"] == "bank_conflicts"
    assert is_png(view, "memory_shared_column")
    assert np.array_equal(rec.outputs["out"], x.T)


def test_warp_pattern_without_a_kernel():
    assert viz.warp_pattern(lambda lane: lane).facts["sectors"] == 4
    stride2 = viz.warp_pattern(lambda lane: 2 * lane)
    assert (stride2.facts["sectors"], stride2.facts["bank_conflicts"]) == (8, 1)
    assert viz.warp_pattern(lambda lane: 32 * lane).facts["bank_conflicts"] == 31
    broadcast = viz.warp_pattern(lambda lane: 0)
    assert broadcast.facts["bank_conflicts"] == 0, "one word read by all lanes is a broadcast, not a conflict"
    assert is_png(stride2, "warp_pattern_stride2")


def test_access_view_labels_both_axes_and_keys_its_colours():
    sectors, banks = viz.warp_pattern(lambda lane: 32 * lane).axes
    assert sectors.get_xlabel().startswith("the 32-byte sectors") and sectors.get_ylabel() == "lane"
    assert "green" in banks.get_xlabel() and "red" in banks.get_xlabel() and banks.get_ylabel() == "pass"


def test_memory_access_names_the_valid_range():
    rec = viz.record(add, 1, 32, (vector(32), vector(32), np.zeros(32, np.float32)))
    with pytest.raises(ValueError, match="request must be 0..2"):
        viz.memory_access(rec, request=3)


# --- tiles and waves, roofline, output diff -----------------------------------------------------


def test_wave_quantization_1792_vs_1794():
    small, big = (viz.wave_view(n, n, tile=(256, 128), sms=108) for n in (1792, 1794))
    assert (small.facts["tiles"], small.facts["waves"]) == (98, 1)
    assert (big.facts["tiles"], big.facts["waves"], big.facts["last_wave_tiles"]) == (120, 2, 12)
    assert big.facts["last_wave_utilization"] == pytest.approx(12 / 108)
    assert len(highlighted_patches(big, "wave1")) == 12 and is_png(big, "waves_1794")
    assert is_png(small, "waves_1792")


def test_roofline_places_points_under_the_roof():
    view = viz.roofline([("add", 1e6, 12e6, 1e-4), dict(name="matmul", flops=2e9, bytes=12e6, seconds=1e-3)],
                        peak_flops=19.5e12, peak_bandwidth=1.5e12)
    add_point, matmul_point = view.facts["points"]
    assert add_point["memory_bound"] and not matmul_point["memory_bound"]
    assert add_point["roof"] == pytest.approx(1e6 / 12e6 * 1.5e12) and view.facts["ridge"] == 13
    assert is_png(view, "roofline")


def test_output_diff_marks_wrong_and_never_written_elements():
    @cuda.jit
    def double_off_by_one(x, out):
        i = cuda.grid(1)
        if i < x.size - 1:  # misses the last element
            out[i] = 2 * x[i] if i != 3 else x[i]

    rec = viz.record(double_off_by_one, 2, 4, (vector(8), np.zeros(8, np.float32)))
    view = viz.output_diff(rec.outputs["out"], 2 * vector(8), rec.written("out"))
    assert view.facts["wrong"] == [3] and view.facts["unwritten"] == [7]
    assert len(highlighted_patches(view, "wrong")) == 1 and is_png(view, "output_diff")


def test_record_keeps_the_trace_of_a_failed_launch():
    rec = viz.record(block_sum_no_first_barrier, 2, 8, (vector(16), np.zeros(2, np.float32)))
    assert isinstance(rec.error, gpusim.RaceError) and rec.report is None and rec.trace


# --- the lines the lessons use (the lead pastes the second string of each pair into the lesson) -------

LESSON_KERNELS = """
@cuda.jit
def add_kernel(a, b, out):  # lesson 04
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + b[i]


def make_tiled_matmul(T):  # lesson 05
    @cuda.jit
    def matmul(a, b, c):
        sA = cuda.shared.array((T, T), float32)
        sB = cuda.shared.array((T, T), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        m, k = a.shape
        n = b.shape[1]
        acc = float32(0.0)
        for k0 in range(0, k, T):
            sA[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)
            sB[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)
            cuda.syncthreads()
            for j in range(T):
                acc += sA[ty, j] * sB[j, tx]
            cuda.syncthreads()
        if row < m and col < n:
            c[row, col] = acc
    return matmul
"""

LESSON_CELLS = {
    "01 thread map": """
@cuda.jit
def double(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]


x = np.arange(10, dtype=np.float32)
viz.thread_map(double, 3, 4, (x, np.zeros_like(x)), block_id=1, thread=2)
""",
    "01 thread map widget": """
viz.thread_map_widget(double, 3, 4, (x, np.zeros_like(x)))
""",
    "02 phase stepper": """
@cuda.jit
def reverse_no_barrier(x, out):
    shared = cuda.shared.array(4, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    shared[t] = x[i]
    out[i] = shared[cuda.blockDim.x - 1 - t]


x = np.arange(8, dtype=np.float32)
viz.phase_stepper(reverse_no_barrier, 2, 4, (x, np.zeros_like(x)))
""",
    "04 warp pattern": """
viz.warp_pattern(lambda lane: 2 * lane)  # stride 2: twice the sectors, two lanes per bank
""",
    "04 kernel access": """
x = np.arange(256, dtype=np.float32)
viz.memory_access(add_kernel, 2, 128, (x, x, np.zeros_like(x)), warp=1, request=2)
""",
    "04 roofline": """
viz.roofline([("add fp32", 1, 12, 12 / 1.5e12), ("matmul 4096³", 2 * 4096**3, 3 * 4096**2 * 4, 0.012)])
""",
    "05 tiled matmul phases": """
a, b = random_array(8, 8, seed=1), random_array(8, 8, seed=2)
viz.phase_stepper(make_tiled_matmul(4), (2, 2), (4, 4), (a, b, np.zeros((8, 8), np.float32)), phase=1)
""",
    "05 waves": """
viz.wave_view(1794, 1794, tile=(256, 128), sms=108)  # and 1792: one wave
""",
}


@pytest.fixture(scope="module")
def lesson_namespace():
    import utils

    namespace = {name: getattr(utils, name) for name in ("np", "cuda", "random_array", "gpusim")}
    namespace.update(viz=viz, float32=float32)
    exec(LESSON_KERNELS, namespace)
    return namespace


@pytest.mark.parametrize("name", LESSON_CELLS)
def test_lesson_cells_draw(name, lesson_namespace):
    if name.endswith("widget"):
        exec(LESSON_CELLS["01 thread map"], lesson_namespace)
    *body, last = LESSON_CELLS[name].strip().splitlines()
    exec("\n".join(body), lesson_namespace)
    view = eval(last, lesson_namespace)
    if name.endswith("widget"):
        assert "writes out[0]" in view.caption.value
        return
    assert isinstance(view, viz.View) and is_png(view, "lesson_" + name.replace(" ", "_"))
    facts = view.facts
    expected = {
        "01 thread map": lambda: facts["highlighted"] == {"x": [6], "out": [6]},
        "02 phase stepper": lambda: facts["races"] == {0: {"shared": [0, 1, 2, 3]}},
        "04 warp pattern": lambda: (facts["sectors"], facts["bank_conflicts"]) == (8, 1),
        "04 kernel access": lambda: facts["request"].kind == "write" and facts["sectors"] == 4,
        "04 roofline": lambda: [p["memory_bound"] for p in facts["points"]] == [True, False],
        "05 tiled matmul phases": lambda: facts["phases"] == [0, 1, 2, 3, 4] and facts["races"] == {},
        "05 waves": lambda: (facts["tiles"], facts["waves"]) == (120, 2),
    }
    assert expected[name](), facts


def test_the_other_widgets_redraw_when_a_slider_moves():
    phases = viz.phase_stepper_widget(block_sum_no_first_barrier, 2, 8, (vector(16), np.zeros(2, np.float32)))
    assert "races at s[4], s[5], s[6], s[7]" in phases.caption.value
    phases.controls["phase"].value = 2
    assert "phase 2: 2 thread-reads" in phases.caption.value and "phase 1" not in phases.caption.value
    memory = viz.memory_access_widget(strided_copy, 1, 64, (vector(4096), np.zeros(64, np.float32), 2))
    assert "access 0: read x (global)" in memory.caption.value and ": 8 sectors" in memory.caption.value
    memory.controls["request"].value = 1
    assert "access 1: write out (global)" in memory.caption.value
    waves = viz.wave_view_widget()
    assert waves.caption.value.endswith("98 tiles, 1 waves, last wave 91% full</div>")
    waves.controls["m"].value = waves.controls["n"].value = 1794
    assert "120 tiles, 2 waves, last wave 11% full" in waves.caption.value


def test_phase_stepper_shows_shared_values_after_each_phase():
    view = viz.phase_stepper(block_sum, 2, 8, (np.arange(16, dtype=np.float32), np.zeros(2, np.float32)))
    texts = [[t.get_text() for t in ax.texts] for ax in view.axes]
    assert texts[0][:8] == ["0", "1", "2", "3", "4", "5", "6", "7"]  # after the copy into shared memory
    assert texts[3][:2] == ["28", "16"]  # after the last tree step: s[0] holds the block's sum

