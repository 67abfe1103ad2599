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

import nbformat
import pytest
from notebook_runs import ROOT, execute_notebook

from bench import lesson_kernels, recorded
from tools import first_cell

LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
lesson = pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)

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
    "00_gpu_anatomy": {"1": "seed 000: registers take ~1 cycle", "20": "seed 000: shared memory ~20 cycles",
                       "300": "seed 000: L2 and global ~200-300 cycles"},
    "05_tiled_matmul": {"25": "seed 000 and README: padding GPT-2's vocabulary to 50304 sped training ~25%"},
    **dict.fromkeys(("07_flash_attention", "08_systolic_arrays_and_pipelines"),
                    {"70": "seed 001: FlashAttention-2 at ~70% of an A100",
                     "35": "seed 001: FlashAttention-2 at ~35% of an H100",
                     "65": "seed 001: FlashAttention-3 at ~65% of an H100"}),
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


@functools.cache
def executed(path):
    return execute_notebook(path)[0]


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


def test_bench_loads_the_kernels_lessons_define():
    needs = {"03_numba_cuda.ipynb": ["double_kernel"],
             "04_memory_and_performance.ipynb": ["sin_kernel", "cos_kernel", "square_kernel", "add_kernel",
                                                 "fused_kernel", "forward_store", "backward_stored",
                                                 "forward_recompute", "backward_recompute", "make_transpose"],
             "06_softmax.ipynb": ["softmax_shared", "softmax_warps", "BLOCK", "BLOCK_W"]}
    for notebook, names in needs.items():
        namespace = lesson_kernels.load(notebook)
        assert not [name for name in names if name not in namespace], notebook


COMPILE = """
from numba import cuda, float32, int64, uint64
from bench.lesson_cells import bandwidth, latency, launching
array_u64, array_f32 = uint64[::1], float32[::1]
for kernel, signature in [
    (latency.chase_global, (array_u64, int64, int64, array_u64)),
    (latency.chase_shared, (array_u64, int64, int64, array_u64)),
    (latency.read_all, (array_u64, array_u64)),
    (bandwidth.copy_coalesced, (array_f32, array_f32)),
    (bandwidth.copy_coalesced_4, (array_f32, array_f32)),
    (bandwidth.copy_coalesced_4_serial, (array_f32, array_f32)),
    (bandwidth.copy_strided, (array_f32, array_f32)),
    (launching.add_kernel, (array_f32, array_f32, array_f32)),
    (launching.busy_kernel, (array_f32, int64)),
    (launching.empty_kernel, (array_f32,)),
]:
    cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
print("compiled")
"""


def test_lesson_cell_kernels_compile_for_an_h100():
    """The measurement kernels type-check and compile to PTX for sm_90: no GPU needed, only no simulator."""
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
