"""The compile chain of Part 9 with real artifacts, made on a machine without a GPU.

    python bench/compile_chain.py [--out bench/results/compile_chain]
    python bench/compile_chain.py --flash-configs    # registers and spills of each Triton flash tile shape

For the fused row softmax (and, summarised, the tiled matmul and the flash forward) in the three languages
(and the softmax again in Numba with unsigned indices; ``softmax_ptx`` counts each softmax's instructions and
its 64-bit integer ones):

* Numba: Python -> Numba IR -> LLVM IR -> NVVM -> PTX, with ``numba.cuda.compile_ptx(..., cc=(9, 0))``;
* CUDA C++: ``kernels.cu`` -> PTX with NVRTC (the library form of nvcc's front end and optimiser);
* Triton: Python -> Triton IR (TTIR) -> TritonGPU IR -> LLVM IR -> PTX -> cubin, with ``triton.compile`` for a
  Hopper target, then SASS (the GPU's own instructions) from the cubin with the ``cuobjdump`` that ships in
  Triton's wheel, and ptxas's registers per thread.

Numba's and NVRTC's PTX are newer than the ptxas inside Triton's wheel accepts, so their SASS comes from the
GPU machine (``bench/gpu_languages.py``, which uses nvcc). Needs NVRTC/NVVM (nvidia-cuda-nvrtc, nvidia-nvvm)
and triton; neither Numba's simulator nor Triton's interpreter may be on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # course.kernels
CC = (9, 0)


def numba_ptx(out: Path) -> dict:
    from numba import cuda

    from course.kernels import attention, matmul, softmax

    kernels = {
        "softmax": (softmax.make_softmax_rows(256).kernel, "void(float32[:, ::1], float32[:, ::1])"),
        "softmax_unsigned": (softmax.make_softmax_rows_unsigned(256).kernel,
                             "void(float32[:, ::1], float32[:, ::1])"),
        "softmax_unrolled": (softmax.make_softmax_rows_unrolled(256).kernel,
                             "void(float32[:, ::1], float32[:, ::1])"),
        "matmul": (matmul.make_tiled_matmul(16).kernel,
                   "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"),
        "flash": (attention.make_flash_smem(64, 64).kernel,
                  "void(float32[:, :, ::1], float32[:, :, ::1], float32[:, :, ::1], float32[:, :, ::1], "
                  "float32[:, ::1], float32)"),
    }
    info = {}
    for name, (kernel, signature) in kernels.items():
        start = time.perf_counter()
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=CC)
        info[name] = {"seconds": time.perf_counter() - start, "ptx_lines": ptx.count("\n")}
        if name.startswith("softmax"):
            (out / f"numba_{name}.ptx").write_text(ptx)
    return info


def instruction_counts(ptx: str) -> dict:
    """Instructions of a PTX text (one per line that starts with an opcode), and how many work on 64-bit
    integers (.s64, .u64, .b64; parameter loads and address-space conversions left out), by opcode."""
    ops = re.findall(r"^\s+(?:@!?%p\d+\s+)?([a-z][\w.]*)", ptx, re.M)
    wide = [op for op in ops
            if re.search(r"\.(s64|u64|b64)$", op) and not op.startswith(("ld.param", "cvta"))]
    return {"instructions": len(ops), "int64": len(wide),
            "global_loads": sum(op.startswith("ld.global") for op in ops),
            "int64_by_opcode": {op: wide.count(op) for op in sorted(set(wide), key=wide.count, reverse=True)}}


def softmax_ptx(out: Path) -> dict:
    """instruction_counts of the softmax PTX files this script wrote."""
    names = ("numba_softmax", "numba_softmax_unsigned", "numba_softmax_unrolled", "cuda_cpp_softmax")
    return {name: instruction_counts((out / f"{name}.ptx").read_text()) for name in names}


def cuda_cpp_ptx(out: Path) -> dict:
    from course.kernels import cuda_cpp

    ptx, seconds = cuda_cpp.ptx_with_nvrtc()
    entries = {}
    for match in re.finditer(r"\.entry (\S+)\(", ptx):
        body_end = ptx.find("\n}\n", match.end())
        entries[match.group(1)] = ptx[match.start():body_end].count("\n")
    softmax = next(name for name in entries if "softmax" in name)
    start = ptx.find(f".entry {softmax}(")
    (out / "cuda_cpp_softmax.ptx").write_text(ptx[ptx.rfind("\n\n", 0, start):ptx.find("\n}\n", start) + 3])
    return {"seconds_all_kernels": seconds, "ptx_lines_per_entry": entries}


def triton_chain(out: Path) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from course.kernels import triton_kernels as tk

    target = GPUTarget("cuda", CC[0] * 10 + CC[1], 32)
    jobs = {
        "softmax": (tk.softmax_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32",
                                        "x_stride": "i32", "out_stride": "i32"}, {"BLOCK": 4096}, 8),
        "matmul": (tk.matmul_kernel, {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32",
                                      "N": "i32", "K": "i32", "stride_am": "i32", "stride_bk": "i32",
                                      "stride_cm": "i32"},
                   {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, 8),
        "flash": (tk.flash_kernel, {"q_ptr": "*fp32", "k_ptr": "*fp32", "v_ptr": "*fp32", "o_ptr": "*fp32",
                                    "lse_ptr": "*fp32", "n_q": "i32", "n_k": "i32", "qscale": "fp32"},
                  {"D": 64, "BLOCK_M": 64, "BLOCK_N": 64, "CAUSAL": False, "OFFSET": 0}, 4),
    }
    info = {}
    for name, (kernel, signature, constants, warps) in jobs.items():
        params = list(kernel.arg_names)
        signature = dict(zip(params, list(signature.values()) + ["constexpr"] * len(constants), strict=True))
        start = time.perf_counter()
        source = ASTSource(fn=kernel, signature=signature, constexprs=constants)
        compiled = triton.compile(source, target=target, options={"num_warps": warps, "num_stages": 3})
        seconds = time.perf_counter() - start
        registers, sass = cubin_facts(compiled.asm["cubin"])
        info[name] = {"seconds": seconds, "constants": constants, "num_warps": warps,
                      "shared_bytes": compiled.metadata.shared, "registers": registers,
                      **{f"{key}_lines": compiled.asm[key].count("\n")
                         for key in ("ttir", "ttgir", "llir", "ptx")},
                      "sass_lines": sass.count("\n")}
        if name == "softmax":
            for key in ("ttir", "ptx"):
                (out / f"triton_softmax.{key}").write_text(compiled.asm[key])
            (out / "triton_softmax.sass").write_text(sass)
    return info


def cubin_facts(cubin: bytes) -> tuple[int | None, str]:
    """(registers per thread, SASS text) of a cubin, with the cuobjdump shipped in Triton's wheel."""
    return resource_usage(cubin)["registers"], cuobjdump(cubin, "-sass")


def resource_usage(cubin: bytes) -> dict:
    """Registers per thread and stack bytes per thread (where ptxas puts what it spills) of a cubin."""
    usage = cuobjdump(cubin, "-res-usage")
    found = {key: re.search(rf"{key}:(\d+)", usage) for key in ("REG", "STACK")}
    return {"registers": int(found["REG"][1]) if found["REG"] else None,
            "stack_bytes": int(found["STACK"][1]) if found["STACK"] else None}


def cuobjdump(cubin: bytes, flag: str) -> str:
    import triton

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([str(tool), flag, f.name], capture_output=True, text=True).stdout


def triton_flash_configs() -> list[dict]:
    """Compile the flash kernel for sm_90 in every tile shape of FLASH_CONFIGS, full and causal, as a launch
    on (16, 4096, 64) tensors would (pointers and sizes divisible by 16): registers and spilled bytes."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from course.kernels import triton_kernels as tk

    kernel = tk.flash_kernel
    types = {"q_ptr": "*fp32", "k_ptr": "*fp32", "v_ptr": "*fp32", "o_ptr": "*fp32", "lse_ptr": "*fp32",
             "n_q": "i32", "n_k": "i32", "qscale": "fp32"}
    aligned = {(kernel.arg_names.index(name),): [["tt.divisibility", 16]]
               for name, kind in types.items() if kind != "fp32"}
    rows = []
    for config in tk.FLASH_CONFIGS:
        for causal in (False, True):
            constants = {"D": 64, **config.kwargs, "CAUSAL": causal, "OFFSET": 0}
            signature = {name: types.get(name, "constexpr") for name in kernel.arg_names}
            start = time.perf_counter()
            source = ASTSource(fn=kernel, signature=signature, constexprs=constants, attrs=aligned)
            options = {"num_warps": config.num_warps, "num_stages": config.num_stages}
            target = GPUTarget("cuda", CC[0] * 10 + CC[1], 32)
            compiled = triton.compile(source, target=target, options=options)
            rows.append({**config.kwargs, "num_warps": config.num_warps, "num_stages": config.num_stages,
                         "causal": causal, "seconds": time.perf_counter() - start,
                         "shared_bytes": compiled.metadata.shared, **resource_usage(compiled.asm["cubin"])})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "results" / "compile_chain"))
    ap.add_argument("--flash-configs", action="store_true",
                    help="only print registers and spills of the Triton flash kernel's tile shapes")
    args = ap.parse_args(argv)
    for variable in ("NUMBA_ENABLE_CUDASIM", "TRITON_INTERPRET"):
        if os.environ.get(variable, "0") not in ("", "0"):
            raise SystemExit(f"unset {variable}: this script compiles for a real GPU")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"  # compile times, not cache hits
    if args.flash_configs:
        import triton

        print(f"Triton {triton.__version__}, flash kernel (D = 64) for sm_{CC[0]}{CC[1]}")
        for row in triton_flash_configs():
            print(f"  BLOCK_M {row['BLOCK_M']:3d} BLOCK_N {row['BLOCK_N']:3d} warps {row['num_warps']} "
                  f"{'causal' if row['causal'] else 'full  '}  {row['registers']:3d} registers, "
                  f"{row['stack_bytes']:5d} stack bytes (spills), {row['shared_bytes']:6d} B shared, "
                  f"{row['seconds']:.1f} s")
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import triton

    summary = {"meta": {"target": f"sm_{CC[0]}{CC[1]}", "machine": "no GPU: compilers only",
                        "triton": triton.__version__, "numba_cuda": __import__("numba_cuda").__version__},
               "numba": numba_ptx(out), "cuda_cpp": cuda_cpp_ptx(out), "triton": triton_chain(out)}
    summary["softmax_ptx"] = softmax_ptx(out)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
