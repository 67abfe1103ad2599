"""Lessons 02 and 03 on a GPU: what the buggy kernels that gpusim refuses really do there.

* a missing barrier (lesson 03's `make_reverse_no_barrier`) at several block sizes: inside one warp the race
  often goes unnoticed, across warps it does not;
* divergent barriers (lesson 03's early return, lesson 02's `block_sum_barrier_in_if`): undefined behaviour.
  They run in a child process with a time limit, so that a hang is recorded as one instead of stopping
  the recording;
* a negative index (lesson 03's `difference`) and a missing guard (`double_no_guard`).

The kernels are the lessons' own, passed in as dicts (bench/lesson_kernels.py loads them from the cells
tagged `bench-kernels`). Arrays are NumPy arrays, so the same functions run under Numba's simulator.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import time

import numpy as np

MISSING_BARRIER_BLOCKS = (8, 32, 64, 256)
REPEATS = 20
EARLY_RETURN = ((8, 12), (64, 96), (64, 100))  # (threads per block, elements): 2 blocks, block 1 partly empty
HANG_LIMIT_S = 60
NOT_THE_KERNEL = ("Program hit", "Target application")  # sanitizer reports about API calls and the process
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def reversed_blocks(x, block):
    return x.reshape(-1, block)[:, ::-1].ravel()


def missing_barrier(k03, blocks=MISSING_BARRIER_BLOCKS, repeats=REPEATS):
    """For each block size: how many of 2 * block outputs were wrong, in each of `repeats` launches."""
    rows = []
    for block in blocks:
        kernel = k03["make_reverse_no_barrier"](block)
        x = np.arange(1, 2 * block + 1, dtype=np.float32)
        expected = reversed_blocks(x, block)
        wrong = []
        for _ in range(repeats):
            out = np.zeros_like(x)
            kernel[2, block](x, out)
            wrong.append(int((out != expected).sum()))
        rows.append(dict(block=block, warps=-(-block // 32), outputs=x.size, wrong=wrong))
    return dict(repeats=repeats, rows=rows)


def early_return(k03, block, n):
    """Lesson 03's early-return kernel on n elements in 2 blocks: what block 1's remaining threads read.
    A thread t reads the element its mirror (block - 1 - t) stored; where the mirror returned early, no
    thread stored it."""
    kernel = k03["make_reverse_early_return"](block)
    x = np.arange(1, n + 1, dtype=np.float32)
    out = np.full(n, -1.0, np.float32)
    kernel[2, block](x, out)
    stayed = n - block  # threads of block 1 with an element
    stored = [block - 1 - t < stayed for t in range(stayed)]  # did thread t's mirror store its element?
    expected = [float(x[2 * block - 1 - t]) if mirror else None for t, mirror in enumerate(stored)]
    got = out[block:].tolist()
    right = sum(1 for g, e in zip(got, expected, strict=True) if e is not None and g == e)
    block0_right = bool(np.array_equal(out[:block], reversed_blocks(x[:block], block)))
    return dict(block=block, n=n, exited=block - stayed, out_block1=got, read_a_stored_element=sum(stored),
                right=right, read_unwritten=stayed - sum(stored), block0_right=block0_right)


def barrier_in_if(k02, n=20, seed=5):
    """Lesson 02's block sum with the barrier inside the `if`: its per-block sums against the right ones."""
    values = np.random.default_rng(seed).random(n, dtype=np.float32)
    block = k02["BLOCK"]
    grid = -(-n // block)
    sums = np.full(grid, np.nan, np.float32)
    k02["block_sum_barrier_in_if"][grid, block](values, sums, n)
    padded = np.zeros(grid * block, np.float32)
    padded[:n] = values
    right = padded.reshape(grid, block).sum(axis=1)
    return dict(block=block, n=n, sums=sums.tolist(), right_sums=right.tolist(),
                all_right=bool(np.allclose(sums, right, rtol=1e-5)))


def run_divergent_cases(load):
    """The divergent-barrier cases in this process, printing one JSON line per finished case."""
    k03 = load("03_numba_cuda.ipynb")
    for block, n in EARLY_RETURN:
        print(json.dumps({f"early return, {block} threads, {n} elements": early_return(k03, block, n)}),
              flush=True)
    k02 = load("02_shared_memory_and_barriers.ipynb")
    print(json.dumps({"barrier inside the if": barrier_in_if(k02)}), flush=True)


def divergent(limit_s=HANG_LIMIT_S):
    """The divergent-barrier cases in a child process stopped after `limit_s` seconds: their results, and
    for a case that did not finish, that it hung."""
    names = [f"early return, {block} threads, {n} elements" for block, n in EARLY_RETURN]
    names.append("barrier inside the if")
    start = time.perf_counter()
    command = [sys.executable, "-m", "bench.lesson_cells.barriers", "--divergent"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit_s, cwd=ROOT, env=env)
        output, status = done.stdout, f"exit status {done.returncode}"
    except subprocess.TimeoutExpired as stopped:
        output = stopped.stdout or ""
        output = output.decode() if isinstance(output, bytes) else output
        status = f"stopped after {limit_s} s"
    results = {}
    for line in output.splitlines():
        if line.startswith("{"):
            results.update(json.loads(line))
    for name in names:
        results.setdefault(name, dict(finished=False, child=status))
    return dict(cases=results, child=status, seconds=time.perf_counter() - start)


def negative_index(k03):
    """Lesson 03's `difference` (out[i] = x[i] - x[i - 1]) on x = 1..16: out[0] reads x[-1]."""
    x = np.arange(1, 17, dtype=np.float32)
    out = np.zeros_like(x)
    k03["difference"][2, 8](x, out)
    return dict(x_last=float(x[-1]), out_first4=out[:4].tolist())


def out_of_bounds(k03):
    """Lesson 03's `double_no_guard` on 100 elements with 128 threads: the 28 spare threads run past the end.
    Whether the launch failed, and whether the 100 outputs are right."""
    x = np.arange(1, 101, dtype=np.float32)
    out = np.zeros_like(x)
    try:
        k03["double_no_guard"][2, 64](x, out)
        error = None
    except Exception as failure:  # noqa: BLE001 -- recorded: what the launch said
        error = f"{type(failure).__name__}: {failure}"
    return dict(error=error, outputs_right=bool(np.array_equal(out, 2 * x)))


def show_missing_barrier(records):
    for record in records:
        print(record.header())
        for row in record.data["rows"]:
            wrong = row["wrong"]
            warps = f"{row['warps']} warp" + ("s" if row["warps"] > 1 else "")
            print(f"  {row['block']:4} threads per block ({warps}): "
                  f"wrong outputs in {sum(w > 0 for w in wrong)} of {len(wrong)} launches, "
                  f"{min(wrong)} to {max(wrong)} of {row['outputs']} each")


def show_divergent(records, cases=None):
    for record in records:
        print(record.header())
        for name, case in record.data["cases"].items():
            if cases is not None and name not in cases:
                continue
            if not case.get("finished", True):
                print(f"  {name}: did not finish ({case['child']}): a hang")
            elif name.startswith("early return"):
                print(f"  {name}: finished, no error; {case['exited']} threads of block 1 returned early; "
                      f"of the {case['n'] - case['block']} that stayed, {case['right']} read their mirror's "
                      f"element and {case['read_unwritten']} read shared memory nobody wrote "
                      f"(block 0 {'right' if case['block0_right'] else 'WRONG'})")
            else:
                print(f"  {name}: finished, no error; sums {'all right' if case['all_right'] else 'WRONG'} "
                      f"({', '.join(f'{s:.4f}' for s in case['sums'])} against "
                      f"{', '.join(f'{s:.4f}' for s in case['right_sums'])})")


def show_indices(records):
    for record in records:
        print(record.header())
        data = record.data
        negative, beyond = data["negative_index"], data["out_of_bounds"]
        print(f"  difference: out[0:4] = {negative['out_first4']} (x[-1] = {negative['x_last']:g})")
        outputs = "right" if beyond["outputs_right"] else "WRONG"
        print(f"  double_no_guard, 28 threads past the end: {beyond['error'] or 'no error'}; "
              f"the 100 outputs {outputs}")


def main():
    if sys.argv[1:] == ["--divergent"]:
        from bench import lesson_kernels

        run_divergent_cases(lesson_kernels.load)


if __name__ == "__main__":
    main()


def gpusim_verdicts(load, cases=None):
    """What gpusim says about each of bench/sanitizer.py's cases (the same launches): its error's class, or
    "no error". `load(notebook)` gives a lesson's kernels (bench/lesson_kernels.load, or a lesson's
    globals())."""
    import gpusim
    from bench import sanitizer

    verdicts, loaded = {}, {}
    for name in cases or sanitizer.CASES:
        lesson, launch = sanitizer.CASES[name]
        if lesson not in loaded:
            with contextlib.redirect_stdout(io.StringIO()):  # the lesson's own cells print as they run
                loaded[lesson] = load(sanitizer.NOTEBOOKS[lesson])
        kernels = {}
        for key, value in loaded[lesson].items():
            if key.startswith("make_"):
                kernels[key] = lambda *a, factory=value: gpusim.jit(factory(*a))
            elif hasattr(value, "py_func"):
                kernels[key] = gpusim.jit(value)
            else:
                kernels[key] = value
        try:
            launch(kernels)
            verdicts[name] = "no error"
        except gpusim.KernelError as error:
            verdicts[name] = type(error).__name__
    return verdicts


def show_sanitizer(records, verdicts, cases=None):
    """Per device: one row per case, what gpusim says (`verdicts`, from gpusim_verdicts) and what each of
    compute-sanitizer's tools reported about the kernel on the GPU (bench.sanitizer.findings); then the
    kinds of report behind each finding, and how memcheck's counts were read."""
    from bench import sanitizer

    for record in records:
        data = record.data
        control = data["cases"].get(sanitizer.CONTROL, {})
        print(f"{record.header()}; compute-sanitizer {data['sanitizer_version']}")
        names = [name for name in data["cases"] if cases is None or name in cases]
        print(f"  {'case':52} {'gpusim (here)':18}" + "".join(f"{tool:>24}" for tool in data["tools"]))
        for name in names:
            results = data["cases"][name]
            cells = [sanitizer.findings(results.get(tool), control.get(tool)) for tool in data["tools"]]
            print(f"  {name:52} {verdicts.get(name, '-'):18}" + "".join(f"{cell:>24}" for cell in cells))
        for name in names:
            for tool, result in data["cases"][name].items():
                if sanitizer.findings(result, control.get(tool)) not in ("clean", "-"):
                    kinds = [kind for kind in result["kinds"] if not kind.startswith(NOT_THE_KERNEL)]
                    print(f"  {tool} on '{name}': {'; '.join(kinds[:2])[:150]}")
        baseline = control.get("memcheck", {}).get("errors")
        if baseline and "kernel_reports" not in control.get("memcheck", {}):
            print(f"  (memcheck counted {baseline} errors in the control, a correct kernel: failed CUDA API "
                  f"calls of Numba's start-up, made in every run; the table shows each case's errors beyond "
                  f"them)")
