"""The lessons: one mode line at the top, GPU cells that read committed results (never a file that is not
there) and show them with their provenance in CPU mode, and measured numbers in the text that come from a
cell's output or a cited source, never typed in by hand."""

import ast
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from notebook_runs import ROOT, execute_notebook

from bench import lesson_kernels, recorded
from course import launchlog, ptx
from tools import first_cell

LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# Every test of one lesson runs in the same xdist worker (`--dist loadgroup`), so each lesson runs once.
lesson = pytest.mark.parametrize(
    "path", [pytest.param(p, marks=pytest.mark.xdist_group(f"lesson-{p.stem}")) for p in LESSONS],
    ids=lambda p: p.stem)

# A measured number in a sentence: a number (in digits or in words, or several joined by "→", "to", "against",
# ...) followed by a unit of time, speed, a ratio, or a count that gpusim or a benchmark reports. Sizes (KB,
# MiB, ...) and plain counts are definitions, not measurements.
WORDS = {word: value for value, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
VALUE = r"(?:\d[\d,]*(?:\.\d+)?|" + "|".join(WORDS) + r")"
UNIT = (r"(?:TFLOP/s|GFLOP/s|GB/s|TB/s|ms\b|µs|us\b|ns\b|%|x\b|times\b|cycles\b|"
        r"(?:global |shared )?(?:accesses|loads|reads|stores|sectors|barriers|bank conflicts|wavefronts)\b)")
JOINED = rf"{VALUE}(?:\s*(?:→|->|to|against|vs\.?|and|or)\s*{VALUE})*"
MEASURED = re.compile(rf"(?<![\w.\-/^])({JOINED})\s*(?:×\s*)?{UNIT}", re.IGNORECASE)
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
WINDOW = 3  # code cells before and after a markdown cell whose outputs its numbers may come from

# Numbers stated in the text that come from a cited source, not from this course's measurements.
SOURCED = {
    "00_gpu_anatomy": {"1": "seed 000: registers take ~1 cycle",
                       "300": "seed 000: L2 and global ~200-300 cycles",
                       "24": "Jouppi et al. 2017 (TPU v1 floor plan): the matrix unit is 24% of the die",
                       "29": "Jouppi et al. 2017 (TPU v1 floor plan): the unified buffer is 29% of the die"},
    "05_tiled_matmul": {"25": "seed 000 and README: padding GPT-2's vocabulary to 50304 sped training ~25%"},
    "07_flash_attention": {"70": "seed 001: FlashAttention-2 at ~70% of an A100",
                           "35": "seed 001: FlashAttention-2 at ~35% of an H100",
                           "75": "Shah et al. 2024 (FlashAttention-3): 740 TFLOP/s FP16, 75% of an H100",
                           "740": "Shah et al. 2024 (FlashAttention-3): up to 740 TFLOP/s in FP16 on an H100",
                           "65": "seed 001, the lecture notes: FlashAttention-3 at ~65% of an H100",
                           "3.9": "Shah et al. 2024: the H100 SXM5's exp (MUFU) throughput, 3.9 TFLOP/s",
                           "989": "NVIDIA's H100 SXM datasheet: 989 TFLOP/s dense FP16/BF16 tensor"},
    "08_systolic_arrays_and_pipelines": {
        "70": "seed 001: FlashAttention-2 at ~70% of an A100",
        "35": "seed 001: FlashAttention-2 at ~35% of an H100",
        "75": "FlashAttention-3 paper (Shah et al. 2024): up to 75% of an H100's FP16 peak",
        "740": "FlashAttention-3 paper: about 740 TFLOP/s in FP16 on an H100",
        "34": "TPU paper (Jouppi et al. 2017): weight memory of DDR3 at 34 GB/s"},
}


def code_sources(path):
    return [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


def recorded_reads(path):
    """(name, key or None) of every `recorded(...)` call in a lesson's code."""
    reads = []
    for source in code_sources(path):
        tree = ast.parse("\n".join("" if line.lstrip().startswith(("%", "!")) else line
                                   for line in source.splitlines()))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if getattr(node.func, "id", getattr(node.func, "attr", None)) == "recorded":
                values = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
                assert len(values) == len(node.args) and values, (
                    f"{path.name}: recorded(...) must name its file (and section) with string literals, "
                    f"so that this test can check them: {ast.unparse(node)}")
                reads.append((values[0], values[1] if len(values) > 1 else None))
    return reads


LAUNCH_LOGS = Path(tempfile.mkdtemp(prefix="lesson_launches_"))
# (lesson, kernel): why its float64 instructions are meant
FLOAT64_MEANT = {
    ("03_numba_cuda", "chatty_kernel"): "print() hands a float to the GPU's printf as a double, as C does",
}


RUN_SECONDS = {}  # lesson path -> seconds its run took


@functools.cache
def executed(path):
    """The lesson run top to bottom in CPU mode, with every kernel it launched recorded (launch_log)."""
    log = launch_log(path)
    log.unlink(missing_ok=True)
    os.environ["COURSE_LAUNCH_LOG"] = str(log)
    try:
        notebook, RUN_SECONDS[path] = execute_notebook(path)
        return notebook
    finally:
        del os.environ["COURSE_LAUNCH_LOG"]


def launch_log(path):
    return LAUNCH_LOGS / f"{path.stem}.jsonl"


def text_of_outputs(cell):
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append(output["text"])
        for kind in ("text/plain", "text/markdown"):
            parts.append(output.get("data", {}).get(kind, ""))
    return "".join(parts)


def numbers_in(text):
    return [float(token.replace(",", "")) for token in NUMBER.findall(text)]


def shown(value, written, outputs):
    """Whether `value` (written as `written` in the text) is one of the numbers in `outputs`, as printed or
    rounded to the text's precision."""
    decimals = len(written.split(".")[1]) if "." in written else 0
    return any(round(number, decimals) == value for number in numbers_in(outputs))


@lesson
def test_every_lesson_starts_with_the_same_mode_line(path):
    first, *rest = code_sources(path)
    assert first.strip() == first_cell.LOADER, (
        f"{path.name}: the first code cell must be tools/first_cell.py's loader, `from utils import *` for a "
        "notebook inside the course (it prints the mode line): run `python tools/first_cell.py`.")
    extra = [source.splitlines()[0] for source in rest
             if re.search(r"print\(\s*f?[\"']\s*mode\s*[:=]", source, re.IGNORECASE)]
    assert not extra, f"{path.name}: a second mode line is printed by {extra}; utils prints the only one."


@lesson
def test_lessons_read_only_committed_results(path):
    for source in code_sources(path):
        assert not re.search(r"glob\(|results.{0,40}\.(json|png|txt)\b", source), (
            f"{path.name}: read GPU results with bench.recorded.recorded(name, key), not by path:\n{source}")
    for name, key in recorded_reads(path):
        files = recorded.result_files(name)
        assert files, f"{path.name} reads {recorded.wanted(name, key)}, and bench/results/ has no such file."
        if key is not None:
            assert any(key in json.loads(file.read_text()) for file in files), (
                f"{path.name} reads {recorded.wanted(name, key)}: no committed file has that section "
                f"({', '.join(file.name for file in files)}).")


def test_recorded_says_which_file_is_missing(capsys):
    assert recorded.recorded("gpu_no_such_measurement", "latency") == []
    assert "bench/results/gpu_no_such_measurement_<device>.json, section 'latency'" in capsys.readouterr().out


def test_recorded_results_carry_their_provenance(tmp_path, monkeypatch):
    monkeypatch.setattr(recorded, "RESULTS", tmp_path)
    (tmp_path / "gpu_demo_H100.json").write_text(json.dumps({"value": 1}))
    with pytest.raises(ValueError, match="gpu_demo_H100.json has no 'provenance'"):
        recorded.recorded("gpu_demo")
    origin = {"device": "NVIDIA H100 80GB HBM3", "date": "2026-11-22", "command": "python3 bench/x.py"}
    (tmp_path / "gpu_demo_H100.json").write_text(json.dumps({"value": 1, "provenance": origin}))
    (tmp_path / "gpu_demo_sweep_H100.json").write_text(json.dumps({"provenance": origin}))  # another name
    [record] = recorded.recorded("gpu_demo", "value")
    assert record.data == 1 and record.tag == "H100"
    assert record.header().startswith("NVIDIA H100 80GB HBM3: recorded 2026-11-22 by `python3 bench/x.py`")


@lesson
def test_lesson_runs_clean(path, record_property):
    """Top to bottom in CPU mode, each cell within a time limit: the one run the other tests read."""
    executed(path)
    record_property("notebook_seconds", RUN_SECONDS[path])


@lesson
def test_gpu_cells_show_recorded_results_with_their_provenance(path):
    for cell in executed(path).cells:
        if cell.cell_type != "code":
            continue
        output = text_of_outputs(cell)
        assert "skipped" not in output.lower(), f"{path.name}: a cell only says it skipped:\n{cell.source}"
        if "recorded(" in cell.source:
            assert re.search(r": recorded .+ by `.+` \(bench/results/", output), (
                f"{path.name}: this GPU cell shows no recorded result (device, date, command, file):\n"
                f"{cell.source}\n--- its output:\n{output[:1500]}")


@lesson
def test_measured_numbers_in_the_text_come_from_outputs(path):
    cells = executed(path).cells
    code = [i for i, cell in enumerate(cells) if cell.cell_type == "code"]
    everything = "".join(text_of_outputs(cells[i]) for i in code)
    sourced = SOURCED.get(path.stem, {})
    unexplained = []
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        before = [i for i in code if i < index][-WINDOW:]
        after = [i for i in code if i > index][:WINDOW]
        nearby = "".join(text_of_outputs(cells[i]) for i in before + after)
        outputs = everything if cell.source.lstrip().startswith("## Summary") else nearby
        text = re.sub(r"\$[^$]*\$|`[^`]*`", " ", cell.source)  # formulas and code are not measurements
        for match in MEASURED.finditer(text):
            for written in re.findall(VALUE, match.group(1), re.IGNORECASE):
                written = written.replace(",", "").lower()
                value = float(WORDS.get(written, written))
                if written in sourced or shown(value, written, outputs):
                    continue
                unexplained.append(f"'{match.group(0)}' in: {cell.source.splitlines()[0][:80]}")
    assert not unexplained, (
        f"{path.name} states measured numbers that no nearby cell prints (print them from the data, or cite "
        f"their source in SOURCED):\n" + "\n".join(unexplained))


@lesson
def test_lesson_kernels_compute_in_float32(path):
    """Every kernel a lesson launches, compiled for its argument types as the compile gate compiles a
    learner's (course.ptx), has no float64 instruction in its PTX unless FLOAT64_MEANT says why."""
    executed(path)
    entries = [entry for entry in launchlog.read(launch_log(path)) if "spec" in entry]
    results = ptx.results_of_specs([(entry["spec"], entry["signature"]) for entry in entries], "float64")
    wide, refused = [], []
    for entry, result in zip(entries, results, strict=True):
        where = f"{entry['name']} ({entry['filename']}, line {entry['line']})"
        if "error" in result:
            refused.append(f"{where}: {result['error'][-200:]}")
        elif result["float64"] and (path.stem, entry["name"]) not in FLOAT64_MEANT:
            wide.append(f"{where}: " + "; ".join(result["float64"][:3]))
    assert not wide, (f"{path.name}: kernels that compute in float64 (a float literal or a mixed-type "
                      f"operation; use float32(...) constants, see Part 3 section 8):\n" + "\n".join(wide))
    assert not refused, f"{path.name}: kernels Numba's CUDA compiler refuses:\n" + "\n".join(refused)


def test_bench_loads_the_kernels_lessons_define():
    needs = {"02_shared_memory_and_barriers.ipynb": ["BLOCK", "block_sum", "block_sum_barrier_in_if"],
             "03_numba_cuda.ipynb": ["double_kernel", "make_reverse_no_barrier", "make_reverse_early_return",
                                     "double_no_guard", "difference", "histogram_no_atomic"],
             "04_memory_and_performance.ipynb": ["sin_kernel", "cos_kernel", "square_kernel", "add_kernel",
                                                 "fused_kernel", "forward_store", "backward_stored",
                                                 "forward_recompute", "backward_recompute", "make_transpose",
                                                 "scale_thread_per_row", "scale_thread_per_column"],
             "06_softmax.ipynb": ["softmax_shared", "softmax_warps", "BLOCK", "BLOCK_W"]}
    for notebook, names in needs.items():
        namespace = lesson_kernels.load(notebook)
        assert not [name for name in names if name not in namespace], notebook


COMPILE = """
from numba import cuda, float32, int64, uint64
from bench.lesson_cells import bandwidth, fusion, latency, launching, tile_width
from course.compilegate import _target_device
from course.ptx import float64_lines
array_u64, array_f32, matrix_f32 = uint64[::1], float32[::1], float32[:, ::1]
ARITY = {"forward_store": 4, "backward_stored": 4, "forward_recompute": 2, "backward_recompute": 3}
as_first_written = fusion.make_sigmoid_kernels(1.0, 1)  # float64 constants, kept for comparison
four_per_thread = fusion.make_sigmoid_kernels(float32(1), 4)
for kernel, signature, float64_wanted in [
    *[(kernels[name], (array_f32,) * arity, kernels is as_first_written)
      for kernels in (as_first_written, four_per_thread) for name, arity in ARITY.items()],
    *[(kernel, (matrix_f32,) * 3 + (int64,) * len(extra), False)
      for kernel, extra, _ in tile_width.VARIANTS.values()],
    (latency.chase_global, (array_u64, int64, int64, array_u64), False),
    (latency.chase_shared, (array_u64, int64, int64, array_u64), False),
    (latency.read_all, (array_u64, array_u64), False),
    (bandwidth.copy_coalesced, (array_f32, array_f32), False),
    (bandwidth.copy_coalesced_4, (array_f32, array_f32), False),
    (bandwidth.copy_coalesced_4_serial, (array_f32, array_f32), False),
    (bandwidth.copy_strided, (array_f32, array_f32), False),
    (launching.add_kernel, (array_f32, array_f32, array_f32), False),
    (launching.busy_kernel, (array_f32, int64), False),
    (launching.empty_kernel, (array_f32,), False),
]:
    with _target_device():  # device functions ask for the GPU's compute capability
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
    found = float64_lines(ptx)
    assert bool(found) == float64_wanted, (kernel.__name__, float64_wanted, found[:4])
print("compiled")
"""


def test_lesson_cell_kernels_compile_for_an_h100():
    """The measurement kernels type-check and compile to PTX for sm_90 (no GPU needed, only no simulator),
    and compute in float32, except the sigmoid kernels kept with float64 constants for comparison."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("NUMBA_ENABLE_CUDASIM", "COURSE_MODE")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", COMPILE], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=240)
    assert done.returncode == 0 and "compiled" in done.stdout, done.stderr[-3000:]


def test_run_notebook_as_script_reports_each_failing_cell(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("%matplotlib inline\nraise ValueError('boom')"),
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()"),
        nbformat.v4.new_code_cell("x + 41"),
    ])
    path = tmp_path / "demo.ipynb"
    nbformat.write(notebook, path)
    tool = ROOT / "tools" / "run_notebook_as_script.py"
    done = subprocess.run([sys.executable, str(tool), str(path), "--figures", str(tmp_path / "figures")],
                          capture_output=True, text=True, timeout=120)
    log = (tmp_path / "figures" / "demo.log").read_text()
    assert done.returncode == 1
    assert "demo.ipynb cell 2: FAILED: ValueError" in log and "ValueError: boom" in log
    assert "demo.ipynb cell 4: ok" in log and "\n42\n" in log, "later cells run, and a last expression shows"
    assert (tmp_path / "figures" / "demo" / "cell03_1.png").exists()
    assert "1 failed cell(s) [2]" in done.stdout


def test_run_notebook_as_script_reports_a_crash_after_the_last_cell(tmp_path):
    """Every cell passes, then the process aborts on its way out: no failed cell, but the summary says so
    (signal and first line of the crash), the log keeps the crash, and the exit status is 2."""
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(
            "import atexit, os, sys\n"
            "atexit.register(lambda: (print('free(): invalid pointer', file=sys.stderr), sys.stderr.flush(),"
            " os.abort()))"),
        nbformat.v4.new_code_cell("print('last cell')"),
    ])
    path = tmp_path / "crash.ipynb"
    nbformat.write(notebook, path)
    tool = ROOT / "tools" / "run_notebook_as_script.py"
    done = subprocess.run([sys.executable, str(tool), str(path), "--figures", str(tmp_path / "figures")],
                          capture_output=True, text=True, timeout=120)
    log = (tmp_path / "figures" / "crash.log").read_text()
    assert done.returncode == 2, done.stdout + done.stderr
    assert ("=== crash.ipynb: 0 failed cell(s) []; then the process died after its last cell "
            "(killed by SIGABRT: free(): invalid pointer)") in done.stdout
    assert log.index("last cell") < log.index("0 failed cell(s)") < log.index("free(): invalid pointer")
    assert "Fatal Python error: Aborted" in log, "faulthandler leaves the crash's Python stack in the log"


def test_sanitizer_reports_are_read_by_kind():
    """compute-sanitizer's output as bench/sanitizer.py reads it: racecheck's singular and plural summaries,
    the hazards a race names, and memcheck's failed API calls kept apart from the kernel's own reports."""
    from bench import sanitizer

    race = "\n".join(sanitizer.PREFIX + line for line in [
        "Warning: Race reported between Write access at k+0x270",
        "    and Read access at k+0x280 [64 hazards]",
        "RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)"])
    parsed = sanitizer.parse(race)
    counts = (parsed["errors"], parsed["warnings"], parsed["hazards"], parsed["kernel_reports"])
    assert counts == (0, 1, 64, 1)
    memcheck = "\n".join(sanitizer.PREFIX + line for line in [
        'Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to "invalid argument" on CUDA API call to x.',
        "    Saved host backtrace up to driver entry point at error",
        "Invalid __global__ read of size 4 bytes", "    at double_no_guard+0x90",
        "Invalid __global__ read of size 4 bytes", "ERROR SUMMARY: 3 errors"])
    parsed = sanitizer.parse(memcheck)
    assert (parsed["errors"], parsed["api_errors"], parsed["kernel_reports"]) == (3, 1, 2)
    assert sanitizer.findings(dict(parsed, case_finished=True), None) == "2 errors"
    old_format = dict(summaries=["ERROR SUMMARY: 63 errors"], errors=63, case_finished=True)
    assert sanitizer.findings(old_format, dict(errors=34)) == "29 errors", "beyond the control's API errors"


def test_part9_ptx_counts_show_the_signed_index_overhead_and_its_fix():
    """Lesson 09's explanation of the slower Numba softmax: several times the C++ kernel's 64-bit integer
    instructions, none of the excess with unsigned indices, and the unrolled version's loads in flight."""
    summary = ROOT / "bench" / "results" / "compile_chain" / "summary.json"
    counts = json.loads(summary.read_text())["softmax_ptx"]
    cpp = counts["cuda_cpp_softmax"]
    assert counts["numba_softmax"]["int64"] >= 5 * cpp["int64"]
    assert counts["numba_softmax_unsigned"]["int64"] <= cpp["int64"]
    assert counts["numba_softmax_unsigned"]["global_loads"] < cpp["global_loads"]
    assert counts["numba_softmax_unrolled"]["global_loads"] == cpp["global_loads"]


def test_part9_three_language_table_has_a_bf16_tensor_core_row_in_every_language():
    rows = [row for record in recorded.recorded("gpu_languages") for row in record.data["results"]
            if row["family"] == "matmul bf16" and "ms" in row]
    assert {row["language"] for row in rows} == {"Numba", "Triton", "CUDA C++", "PyTorch"}
    assert all(row["rel_err"] < 1e-2 for row in rows)


@pytest.mark.parametrize("world", [1, 2, 4])
def test_recorded_ring_runs_are_right_and_timed_by_their_slowest_rank(world):
    from course.kernels import ring

    records = recorded.recorded(f"ring_attention_p{world}")
    assert records, f"bench/results/ring_attention_p{world}_<device>.json is not committed"
    for record in records:
        for r in record.data["results"]:
            case = (r["n"], r["layout"], r["causal"], r["rel_err"])
            assert r["world"] == world and r["rel_err"] < 1e-4, case
            assert r["pairs"] == ring.work_per_step(r["n"], world, r["layout"], r["causal"])
            assert sum(r["step_seconds"]) == pytest.approx(r["seconds"])
            assert r["seconds"] == pytest.approx(max(rank["timeline"][-1]["end_s"] for rank in r["ranks"]))
            assert [rank["rank"] for rank in r["ranks"]] == list(range(world))


PARTS_8_9 = [ROOT / "notebooks" / "08_systolic_arrays_and_pipelines.ipynb",
             ROOT / "notebooks" / "09_languages_and_many_gpus.ipynb"]


@pytest.mark.parametrize("path", PARTS_8_9, ids=lambda p: p.stem)
def test_parts_8_and_9_have_no_rows_waiting_for_a_recording(path):
    text = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)
    assert not re.search(r"not (?:been )?recorded(?: on \S+)? yet|not measured yet", text)
