"""Part 9's machinery: the Triton watch and compile gate, the stripe balance, ring attention's pieces, and the
bench scripts' CPU paths (ring attention with gloo processes, the three-language harness in smoke mode).

Triton tests run in a subprocess with TRITON_INTERPRET=1 (it must be set before triton's first import, and
other tests of the suite import it without); they are skipped where triton is not installed.
"""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from notebook_runs import ROOT

from course.kernels import ring
from course.tasks import part09

needs_triton = pytest.mark.skipif(importlib.util.find_spec("triton") is None,
                                  reason="triton is not installed")


def run_interpreted(code: str, folder) -> subprocess.CompletedProcess:
    """Run `code` as a script file (Triton reads kernels' source from their file) under the interpreter."""
    script = folder / "script.py"
    script.write_text(textwrap.dedent(code))
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=240)


KERNELS = """
import numpy as np
import triton
import triton.language as tl
from course.tasks import tritonwatch as watch

@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)

@triton.jit
def add_unmasked_load(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets, mask=offsets < n),
             mask=offsets < n)

@triton.jit
def row_copy(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + tl.program_id(0) * n_cols + cols, tl.load(x_ptr + tl.program_id(0) * stride + cols),
             mask=cols < n_cols)

def arrays(n):
    return {"x": watch.guarded(np.arange(n, dtype=np.float32)), "y": watch.guarded(np.ones(n, np.float32)),
            "out": watch.guarded(np.zeros(n, np.float32)), "n": n}
"""


@needs_triton
def test_watch_counts_a_masked_kernel_and_names_an_unmasked_read(tmp_path):
    result = run_interpreted(KERNELS + """
a = arrays(100)
counts = watch.run(add, (2,), a, {"BLOCK": 64})
assert np.array_equal(a["out"].numpy(), np.arange(100) + 1)
print("COUNTS", counts.load_calls, counts.loaded["x"], counts.loaded["y"], counts.stored["out"],
      counts.max_program_load_calls)
try:
    watch.run(add_unmasked_load, (2,), arrays(100), {"BLOCK": 64})
except watch.OutOfBoundsAccess as error:
    print("ERROR", error)
x = watch.guarded_rows(np.ones((3, 10), np.float32), 16)
try:
    watch.run(row_copy, (3,), {"x": x, "out": watch.guarded(np.zeros((3, 10), np.float32)), "n_cols": 10,
                               "stride": x.stride(0)}, {"BLOCK": 16})
except watch.OutOfBoundsAccess as error:
    print("ROW", error)
""", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "COUNTS 4 100 100 100 2" in result.stdout
    assert "program 1 of add_unmasked_load read x[100], but `x` has shape (100,)" in result.stdout
    assert "28 lanes" in result.stdout and "tl.load(x_ptr + offsets)" in result.stdout
    assert "ROW program 0 of row_copy read x[0, 10]" in result.stdout and "only 10 columns" in result.stdout


@needs_triton
def test_watch_runs_kernels_made_for_the_gpu_under_the_interpreter_too(tmp_path):
    """On a GPU, TRITON_INTERPRET is off and @triton.jit makes a JITFunction: the watch (and every Triton
    check) must still run it interpreted, not hand CPU tensors to the GPU compiler."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(KERNELS + """
print(type(add).__name__)
a = arrays(100)
watch.run(add, (2,), a, {"BLOCK": 64})
assert np.array_equal(a["out"].numpy(), np.arange(100) + 1)
try:
    watch.run(add_unmasked_load, (2,), arrays(100), {"BLOCK": 64})
except watch.OutOfBoundsAccess as error:
    print("ERROR", error)
"""))
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join(paths)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=240)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("JITFunction")
    assert "program 1 of add_unmasked_load read x[100]" in result.stdout


@needs_triton
def test_gate_accepts_a_good_kernel_and_names_what_the_compiler_refuses(tmp_path):
    result = run_interpreted(KERNELS + """
from course.tasks import tritongate

@triton.jit
def with_break(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    for i in range(BLOCK):
        if i >= n:
            break
        tl.store(out_ptr + i, tl.load(x_ptr + i))

SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
tritongate.compile_check(add, SIGNATURE, [{"BLOCK": 64}, {"BLOCK": 128}])
print("GOOD accepted")
for kernel, signature, block in ((add, SIGNATURE, 100),
                                 (with_break, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, 64)):
    try:
        tritongate.compile_check(kernel, signature, [{"BLOCK": block}])
    except tritongate.TritonCompileError as error:
        print("REFUSED", error)
""", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "GOOD accepted" in result.stdout
    assert "power of 2" in result.stdout and "tl.arange(0, BLOCK)" in result.stdout
    assert "cannot `break`" in result.stdout and "script.py:" in result.stdout


def test_stripes_balance_and_contiguous_blocks_do_not():
    n, p = 17, 4
    striped = [np.arange(r, n, p) for r in range(p)]
    contiguous = np.array_split(np.arange(n), p)
    def spread(layout):
        work = part09.causal_work(layout)
        return (work.max(1) - work.min(1)).max()

    assert spread(striped) <= -(-n // p) < spread(contiguous)
    assert part09.causal_work(striped).sum() == n * (n + 1) // 2  # every causal pair once, in any layout


def test_the_checks_own_layout_is_refused_but_its_work_measure_may_be_used(capsys):
    def stripes(n, p):
        layout = [np.arange(r, n, p) for r in range(p)]
        part09.causal_work(layout)  # shown in the "Try it" cell: a learner may measure a layout with it
        return layout

    part09.check_stripes(stripes)
    assert capsys.readouterr().out.startswith("✓ stripes")
    with pytest.raises(part09.CheckFailed, match="calls `ring_positions` from course/tasks/part09.py"):
        part09.check_stripes(lambda n, p: part09.ring_positions(n, p, "striped"))


def test_a_ring_step_that_ignores_the_state_it_is_given_fails():
    seen = {}

    def recompute(m, l, acc, q, k, v, q_pos, k_pos, causal):  # noqa: E741
        blocks = seen.setdefault((q.tobytes(), q_pos.tobytes()), [])
        blocks.append((k.astype(np.float64), v.astype(np.float64), k_pos))
        keys, values, pos = (np.concatenate(parts) for parts in zip(*blocks, strict=True))
        s = q.astype(np.float64) @ keys.T / np.sqrt(q.shape[1])
        if causal:
            s = np.where(pos[None, :] <= q_pos[:, None], s, -np.inf)
        m_new = s.max(axis=1)
        e = np.exp(s - np.where(np.isinf(m_new), 0.0, m_new)[:, None])
        return m_new, e.sum(axis=1), e @ values

    with pytest.raises(part09.CheckFailed, match="elements of `o` are wrong"):
        part09.check_ring_step(recompute)


def test_ring_pieces_merge_in_any_order_to_full_attention():
    q, k, v = (torch.randn(2, 24, 8, generator=torch.Generator().manual_seed(s)) for s in (1, 2, 3))
    expected, expected_lse = ring.attention64(q * 6, k, v, causal=True)
    pos = ring.positions(24, 3, "striped")
    for rank in range(3):
        o = torch.zeros(2, 8, 8)
        lse = torch.full((2, 8), float("-inf"))
        for src in (2, 0, 1):  # any order
            block = ring.block_attention(q[:, pos[rank]] * 6, k[:, pos[src]], v[:, pos[src]], pos[rank],
                                         pos[src], True)
            o, lse = ring.merge(o, lse, *block)
        assert torch.allclose(o.double(), expected[:, pos[rank]], atol=1e-5)
        assert torch.allclose(lse.double(), expected_lse[:, pos[rank]], atol=1e-4)
    assert ring.work_per_step(8, 2, "contiguous") == [[10, 10], [0, 16]]  # step 1: device 0 idles


@pytest.mark.parametrize("layout", ring.LAYOUTS)
def test_each_ring_plan_is_an_ordinary_kernels_calls_and_covers_exactly_the_causal_pairs(layout):
    """Between any two devices the plan's calls (full, or lower-triangular with offset 0 or -1, on slices of
    the local blocks) cover exactly the pairs the positions' causal mask keeps, each once; the closed-form
    pair counts agree with a count from the positions."""
    for world in (1, 2, 3, 4, 5):
        n = 3 * ring.granule(world, layout)
        pos = ring.positions(n, world, layout)
        assert sorted(torch.cat(pos).tolist()) == list(range(n))
        rows = n // world
        for causal in (True, False):
            for rank in range(world):
                for src in range(world):
                    want = pos[src][None, :] <= pos[rank][:, None] if causal else torch.ones(rows, rows) > 0
                    covered = torch.zeros(rows, rows, dtype=torch.int64)
                    for qs, ks, mode in ring.plan(rows, world, layout, causal, rank, src):
                        block = torch.ones(qs.stop - qs.start, ks.stop - ks.start, dtype=torch.int64)
                        offset = 0 if mode == "causal" else -1
                        covered[qs, ks] += block if mode == "full" else block.tril(offset)
                    assert torch.equal(covered, want.long()), (world, causal, rank, src)
                    assert ring.pairs(n, world, layout, causal, rank, src) == int(want.sum()) == \
                        ring.count_pairs(pos[rank], pos[src], causal)


def test_zigzag_balances_every_step_and_stripes_nearly():
    assert ring.work_per_step(16, 4, "zigzag") == [[10] * 4] + [[8] * 4] * 3
    assert ring.work_per_step(16, 4, "striped") == [[10, 10, 10, 10], [6, 10, 10, 10], [6, 6, 10, 10],
                                                    [6, 6, 6, 10]]


def ring_run(tmp_path, *options, world=2):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "TRITON_INTERPRET")}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "ring_attention.py"), "--backend", "gloo",
                           "--world", str(world), "--heads", "1", "--repeats", "1", "--out", str(tmp_path),
                           *options],
                          capture_output=True, text=True, env=env, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((tmp_path / f"ring_attention_p{world}_CPU.json").read_text())


@pytest.mark.timeout(300)
def test_every_layout_on_four_processes_matches_float64_pass_after_pass(tmp_path):
    """Four ranks, two passes each (the first is not counted): the checked output is the second pass's, so a
    pass that leaves a rank's own K/V block overwritten (it was once reused as a receive buffer, and at
    P >= 3 the next pass then ran its masks on the wrong blocks) fails here."""
    run = ring_run(tmp_path, "--n", "64", "--dim", "16", world=4)
    assert {(r["layout"], r["causal"]) for r in run["results"]} == {("contiguous", True), ("striped", True),
                                                                    ("zigzag", True), ("contiguous", False)}
    for r in run["results"]:
        assert r["rel_err"] < 1e-5, (r["layout"], r["causal"], r["rel_err"])
        assert [[step["src"] for step in rank["timeline"]] for rank in r["ranks"]] == \
            [[(rank - step) % 4 for step in range(4)] for rank in range(4)]


@pytest.mark.timeout(300)
def test_ring_attention_runs_with_gloo_processes(tmp_path):
    run = ring_run(tmp_path, "--n", "64", "--dim", "16")
    assert run["provenance"]["device"] == "CPU" and run["meta"]["world"] == 2
    results = run["results"]
    assert {(r["layout"], r["causal"]) for r in results} == {("contiguous", True), ("striped", True),
                                                             ("zigzag", True), ("contiguous", False)}
    for r in results:
        assert r["rel_err"] < 1e-5
        assert sum(map(sum, r["pairs"])) == (64 * 65 // 2 if r["causal"] else 64 * 64)
        assert sum(r["step_seconds"]) == pytest.approx(r["seconds"])  # the slowest rank, step by step
        for rank in r["ranks"]:
            assert [step["src"] for step in rank["timeline"]] == [rank["rank"], 1 - rank["rank"]]
            for step in rank["timeline"]:
                assert step["end_s"] - step["start_s"] == pytest.approx(step["compute_s"] + step["wait_s"])
    contiguous = next(r for r in results if r["layout"] == "contiguous" and r["causal"])
    assert contiguous["pairs"][1][0] == 0 and contiguous["ranks"][0]["timeline"][1]["calls"] == []
    assert [link["bytes_per_step"] for link in run["links"]] == [2 * 32 * 16 * 4]


@pytest.mark.timeout(600)
def test_ring_attention_runs_the_course_kernel_under_gpusim(tmp_path):
    """The GPU path on the CPU: flash version 7 (small tiles, under gpusim) as the block kernel of stripes
    (diagonal offsets 0 and -1) and zig-zag (half blocks of keys or queries), against float64."""
    run = ring_run(tmp_path, "--n", "64", "--kernel", "gpusim", "--layouts", "striped,zigzag")
    assert {(r["layout"], r["causal"]) for r in run["results"]} == {("striped", True), ("zigzag", True),
                                                                    ("contiguous", False)}
    assert all(r["rel_err"] < 1e-5 and r["kernel"] == "gpusim" for r in run["results"])
    striped = next(r for r in run["results"] if r["layout"] == "striped")
    assert [step["calls"] for step in striped["ranks"][0]["timeline"]] == [["causal"], ["causal-1"]]


@needs_triton
@pytest.mark.timeout(300)
def test_three_language_harness_smoke_run_checks_every_version(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "TRITON_INTERPRET")}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_languages.py"), "--smoke", "--out",
                           str(tmp_path)], capture_output=True, text=True, env=env, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads((tmp_path / "gpu_languages_cpusmoke.json").read_text())["results"]
    languages = {(r["family"], r["language"]) for r in rows}
    for family in ("matmul", "softmax", "attention"):
        assert {(family, "Numba"), (family, "Triton"), (family, "PyTorch")} <= languages
    assert all("error" not in r and r["rel_err"] < 1e-5 for r in rows), rows


@needs_triton
def test_triton_flash_kernel_matches_float64_attention_for_every_tile_shape_and_mask(tmp_path):
    """The causal kernel runs two loops (tiles below the diagonal unmasked, then the crossing ones masked):
    checked where BLOCK_M and BLOCK_N differ, sizes are not multiples of either, and with OFFSET = -1 (rows
    that see no key: o = 0, lse = -inf)."""
    result = run_interpreted("""
import math
import torch
from course.kernels import triton_kernels as tk

def reference(q, k, v, causal, offset):
    s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        i, j = torch.arange(q.shape[1])[:, None], torch.arange(k.shape[1])[None, :]
        s = s.masked_fill(j > i + offset, -math.inf)
    return torch.softmax(s, -1).nan_to_num(0.0) @ v.double(), torch.logsumexp(s, -1)

torch.manual_seed(0)
worst = 0.0
for n_q, n_k in ((40, 40), (37, 53), (50, 29)):
    for tiles in ((16, 16, 4), (32, 16, 4), (16, 32, 4)):
        for causal, offset in ((False, 0), (True, 0), (True, -1)):
            q, k, v = torch.randn(2, n_q, 16), torch.randn(2, n_k, 16), torch.randn(2, n_k, 16)
            o, lse = torch.full((2, n_q, 16), math.nan), torch.full((2, n_q), math.nan)
            tk.flash_attention(q, k, v, o, lse, causal=causal, offset=offset, tiles=tiles)
            ref_o, ref_lse = reference(q, k, v, causal, offset)
            assert torch.equal(torch.isinf(lse), torch.isinf(ref_lse)), (n_q, n_k, tiles, causal, offset)
            seen = torch.isfinite(ref_lse)
            worst = max(worst, (o.double() - ref_o).abs().max().item(),
                        (lse.double() - ref_lse)[seen].abs().max().item())
print("WORST", worst)
try:
    tk.flash_attention(q, k, v, o, lse, tiles="autotune")
except ValueError as error:
    print("REFUSED", error)
""", tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert float(result.stdout.split("WORST")[1].split()[0]) < 1e-5
    assert "REFUSED the interpreter cannot time kernels" in result.stdout


def test_three_language_harness_carries_over_the_rows_of_languages_not_measured_again(tmp_path):
    from bench import gpu_languages

    def row(shape, language, name, ms):
        return {"family": "f", "shape": shape, "language": language, "name": name, "ms": ms}

    earlier = {"provenance": {"date": "2026-11-23 20:14 UTC", "command": "python3 bench/gpu_languages.py"},
               "compile": {"CUDA C++ load_inline": {"seconds": 68.0}, "other": {"seconds": 1.0}},
               "results": [row("A", "Numba", "n1", 9.0), row("A", "Triton", "t", 9.0),
                           row("A", "CUDA C++", "c", 5.0), row("A", "PyTorch", "p", 9.0),
                           row("B", "Numba", "n1", 9.0), row("B", "CUDA C++", "c", 6.0)]}
    path = tmp_path / "earlier.json"
    path.write_text(json.dumps(earlier))
    now = [row("A", "Numba", "n1", 1.0), row("A", "Numba", "n2", 2.0), row("A", "Triton", "t2", 3.0),
           row("A", "PyTorch", "p", 4.0), row("B", "Numba", "n1", 5.0)]
    rows, facts = gpu_languages.carried_over(path, now, {"Triton autotune": {"seconds": 2.0}},
                                             ["Numba", "Triton", "PyTorch"])
    assert [(r["shape"], r["name"], r["ms"]) for r in rows] == [
        ("A", "n1", 1.0), ("A", "n2", 2.0), ("A", "t2", 3.0), ("A", "c", 5.0), ("A", "p", 4.0),
        ("B", "n1", 5.0), ("B", "c", 6.0)]
    kept = [r for r in rows if "kept_from" in r]
    assert [r["language"] for r in kept] == ["CUDA C++", "CUDA C++"]
    assert kept[0]["kept_from"] == "2026-11-23 20:14 UTC: python3 bench/gpu_languages.py"
    assert facts == {"CUDA C++ load_inline": {"seconds": 68.0, "kept_from": kept[0]["kept_from"]},
                     "Triton autotune": {"seconds": 2.0}}


def test_the_ring_step_hint_points_first_and_derives_on_request(capsys):
    part09.hint("ring_step", 1)
    nudge = capsys.readouterr().out
    part09.hint("ring_step", 2)
    derivation = capsys.readouterr().out
    assert "alpha = exp(m - m_new)" in derivation and "exp(m - m_new)" not in nudge
    part09.hint("stripes", 1)
    assert "np.arange" not in capsys.readouterr().out


def test_the_contracts_draw_blocks_past_the_examples_and_rows_below_minus_1e4():
    blocks = {case.params["block"] for case in part09.SCALED_ADD.cases}
    assert max(blocks) > max(part09.VECTOR_BLOCKS) and blocks <= set(part09.POWERS_OF_TWO)
    softmax = part09.TRITON_SOFTMAX
    deep = [part09._softmax_args(case)["x"] for case in softmax.cases if case.inputs == "deep"]
    assert deep and all(x.max() < -1e4 for x in deep)
    for case in part09.RING_STEP.cases:
        if case.inputs == "deep":
            args = part09._ring_args(case)
            scores = args["q"].astype(np.float64) @ args["k"].astype(np.float64).T / np.sqrt(case.params["d"])
            assert scores.max() < -1e4
    assert part09.STRIPES_CONTRACT.sizes[0].drawn > max(n for n, _ in part09.STRIPE_SIZES)


def test_an_unwritten_scaled_add_element_is_named_as_the_checks_sentinel():
    from course.tasks.common import never_written

    output = part09.SCALED_ADD.outputs[0]
    filled = np.full(5, output.fill, np.float32)  # what the check writes into `out` before the launch
    assert never_written(output, filled).all()
