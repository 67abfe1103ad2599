"""Do the float64 mutants that survive Part 8's checks compile to float64 work? Each replaces a float32
literal in a select whose value is stored into a float32 shared array (`x if ok else np.float64(0.0)`).

For the reference kernels of solutions/08 and each such mutant, this compiles the kernel to PTX with Numba's
CUDA compiler (no GPU needed: NVRTC and NVVM only) and counts the PTX lines that name a float64 register or
instruction (`.f64`, `%fd`): conversions and selects included, which the compile gate does not refuse.
Writes bench/results/float64_select_ptx.txt.

    .venv/bin/python bench/float64_select_ptx.py
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "solutions" / "08_systolic_arrays_and_pipelines.ipynb"
MUTANTS = {  # grade_id of the solution cell -> the survivors' replacements (original, mutant)
    "matmul_double_buffered_solution": [
        ("sA[0, ty, tx] = a[row, tx] if row < m and tx < k else float32(0.0)",
         "sA[0, ty, tx] = a[row, tx] if row < m and tx < k else np.float64(0.0)"),
        ("sB[0, ty, tx] = b[ty, col] if ty < k and col < n else float32(0.0)",
         "sB[0, ty, tx] = b[ty, col] if ty < k and col < n else np.float64(0.0)"),
        ("sA[1 - this, ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else float32(0.0)",
         "sA[1 - this, ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else np.float64(0.0)"),
        ("sB[1 - this, ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else float32(0.0)",
         "sB[1 - this, ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else np.float64(0.0)"),
    ],
    "ring_row_max_solution": [
        ("ring[s, lane] = x[row, j] if j < length else float32(-math.inf)",
         "ring[s, lane] = x[row, j] if j < length else np.float64(-math.inf)"),
    ],
}
CONTROL = ("acc = float32(0.0)", "acc = 0.0")  # a float64 accumulator: what float64 work looks like in PTX


def solution_source(grade_id: str) -> str:
    for cell in json.loads(NOTEBOOK.read_text())["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return "".join(cell["source"])
    raise KeyError(grade_id)


def float64_lines(source: str, name: str, types) -> list[str]:
    import numpy as np
    from numba import cuda, float32, int32

    namespace = {"cuda": cuda, "float32": float32, "int32": int32, "np": np, "math": math, "TILE": 16,
                 "SLOTS": 2, "WARP": 32}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    ptx, _ = cuda.compile_ptx(namespace[name].py_func, types, cc=(8, 0))
    return [line.strip() for line in ptx.splitlines() if ".f64" in line or "%fd" in line]


def main() -> int:
    import numba

    matrix = numba.float32[:, :]
    kernels = {"matmul_double_buffered_solution": ("matmul_double_buffered", (matrix, matrix, matrix)),
               "ring_row_max_solution": ("ring_row_max", (matrix, numba.float32[:]))}
    lines = [f"numba {numba.__version__}, PTX for compute capability 8.0; lines naming a float64 register or "
             f"instruction:"]
    for grade_id, replacements in MUTANTS.items():
        name, types = kernels[grade_id]
        source = solution_source(grade_id)
        lines.append(f"{name}, the reference solution: {len(float64_lines(source, name, types))}")
        for original, mutant in replacements:
            assert original in source, original
            found = float64_lines(source.replace(original, mutant), name, types)
            lines.append(f"{name}, `{mutant.strip()}`: {len(found)}")
    source = solution_source("matmul_double_buffered_solution")
    found = float64_lines(source.replace(*CONTROL), "matmul_double_buffered", kernels[
        "matmul_double_buffered_solution"][1])
    lines.append(f"matmul_double_buffered, control `{CONTROL[1]}`: {len(found)} ({', '.join(found[:3])} ...)")
    text = "\n".join(lines) + "\n"
    (ROOT / "bench" / "results" / "float64_select_ptx.txt").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
