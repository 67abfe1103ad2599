"""One kernel in three languages: the course's tiled matmul, fused row softmax and FlashAttention forward in
Numba, CUDA C++ (torch.utils.cpp_extension.load_inline) and Triton, next to what PyTorch gives for free
(cuBLAS, torch.softmax, torch.compile's generated Triton softmax, SDPA); and a bf16 matmul on the tensor
cores in all three (Numba with linked mma.sync: Part 5's versions 15 and 16; Triton's tl.dot; CUDA C++ with
ldmatrix and mma.sync, course/kernels/cuda_cpp/tensorcore.cu) against cuBLAS in bf16. The softmax also runs
in Numba with unsigned indices, the fix of the signed-index overhead its PTX shows. One harness: every
version is checked against the same float64 reference (output poisoned with NaN first) and timed with CUDA
events, as bench/common.time_ms times the other benchmarks (median of repeats after a warm-up call). It
records, per version, the compile time (the first call), the registers per thread, the host time of one call
(what the CPU spends before the GPU gets the work), and the PTX and SASS the compilers produced.

Numba receives Numba device arrays made once from the tensors (cuda.as_cuda_array), outside the timed call,
as bench/gpu_matmul.py and bench/gpu_attention.py do; the time of a call that converts its tensors every time
is recorded beside it (`ms_converting_each_call`). Triton's flash kernel is autotuned (kernels/triton_kernels,
FLASH_CONFIGS): every tile shape's time is recorded.

    python3 bench/gpu_languages.py --out DIR          # on a GPU: writes gpu_languages_<device>.json/.txt and
                                                      # DIR/gpu_languages_asm_<device>/<version>.{ptx,sass}
                                                      # (+ torch.compile's code); DIR is bench/results
    python3 bench/gpu_languages.py --out DIR --languages Numba,Triton,PyTorch --keep OLD.json
                                                      # re-measure some languages; the rows of the others
                                                      # (and their compile facts) are carried over from OLD
    python bench/gpu_languages.py --smoke --out DIR   # on a CPU: tiny sizes, Triton's interpreter, Numba's
                                                      # simulator; checks values only (no timing, no C++)

Sizes (GPU): matmul 4096^3 (float32, and bf16 in / float32 out); softmax 4096 x 4096 and 16384 x 1024;
attention B*H = 16, N = 4096, d = 64, causal and not. float32 everywhere else, TF32 off.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LANGUAGES = ("Numba", "CUDA C++", "Triton", "PyTorch")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--smoke", action="store_true", help="CPU: tiny sizes, values only")
    ap.add_argument("--only", default="", help="comma-separated substrings of version names")
    ap.add_argument("--languages", default=",".join(LANGUAGES),
                    help="comma-separated, of " + ", ".join(LANGUAGES))
    ap.add_argument("--keep", default=None,
                    help="an earlier result file: carry over its rows of the languages not measured now")
    args = ap.parse_args(argv)
    args.languages = [x.strip() for x in args.languages.split(",") if x.strip()]
    unknown = set(args.languages) - set(LANGUAGES)
    if unknown:
        ap.error(f"unknown language(s) {sorted(unknown)}: choose from {', '.join(LANGUAGES)}")
    return args


# ------------------------------------------------------------------------------------------------ setup


def setup(smoke: bool):
    """Environment switches that must precede the imports (simulator / interpreter on the CPU)."""
    if smoke:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        os.environ["TRITON_INTERPRET"] = "1"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.path.insert(0, str(HERE.parent))  # `course.kernels` as the lessons import it, and `bench.common`


class Clock:
    """CUDA events on a GPU (bench.common.time_ms: median of repeats after a warm-up); on the CPU, one call
    and no timing."""

    def __init__(self, torch, gpu: bool):
        self.torch, self.gpu = torch, gpu

    def sync(self):
        if self.gpu:
            self.torch.cuda.synchronize()

    def first_call(self, fn):
        """(seconds, what fn returned) of a first call, compilation included."""
        self.sync()
        start = time.perf_counter()
        result = fn()
        self.sync()
        return time.perf_counter() - start, result

    def median_ms(self, fn):
        if not self.gpu:
            return None
        from bench.common import time_ms

        return time_ms(fn)[0]

    def host_ms(self, fn, reps=20):
        """Median milliseconds until fn() returns, the GPU idle before each call: the CPU's share of a call
        (argument conversion, dispatch, launch), which the event timing includes when the GPU waits for it."""
        if not self.gpu:
            return None
        times = []
        for _ in range(reps):
            self.sync()
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        self.sync()
        return sorted(times)[len(times) // 2]


# --------------------------------------------------------------------------------------------- versions


def numba_versions(smoke):
    """Numba: (name, call, kernels for the artifacts) per family. A call takes Numba arrays (see
    `numba_arrays`), as the kernels' launchers do; the configurations are those of bench/gpu_matmul.py
    (version 10) and bench/gpu_attention.py (versions 2 and 6)."""
    from course.kernels import attention as at
    from course.kernels import matmul as mm
    from course.kernels import softmax as sm
    from course.kernels import tensorcore as tc

    d, tile = (16, 16) if smoke else (64, 64)
    tiled = mm.make_tiled_matmul(16)
    rows = sm.make_softmax_rows(32 if smoke else 256)
    unsigned = sm.make_softmax_rows_unsigned(32 if smoke else 256)
    unrolled = sm.make_softmax_rows_unrolled(32 if smoke else 256)
    flash = {causal: at.make_flash_smem(d, tile, causal) for causal in (False, True)}
    out = {
        "matmul": [("Numba tiled 16x16 (static shared)", tiled, tiled.kernel)],
        "softmax": [("Numba one block per row", rows, rows.kernel),
                    ("Numba one block per row, unsigned indices", unsigned, unsigned.kernel),
                    ("Numba one block per row, unsigned, unrolled by 4", unrolled, unrolled.kernel)],
        "attention": [("Numba flash, one thread per row",
                       lambda q, k, v, o, lse, causal: flash[causal](q, k, v, o, lse),
                       {causal: f.kernel for causal, f in flash.items()})],
    }
    if not smoke:
        best = mm.make_regtile_matmul_vec(128, 128, 8, 8, 8, prefetch=True, UNROLL=2, max_registers=128)
        out["matmul"].append(("Numba best (register tiles, 16-byte loads)", best, best.kernel))
        v6 = {causal: at.make_flash_v6(64, 256, 64, 8, 32, causal, UNROLL=4) for causal in (False, True)}
        out["attention"].append(("Numba best (v6: shuffles, 1 barrier per tile)",
                                 lambda q, k, v, o, lse, causal: v6[causal](q, k, v, o, lse),
                                 {causal: f.kernel for causal, f in v6.items()}))
        v15 = tc.make_mma_matmul(STAGES=3)
        v16 = tc.make_mma_matmul(WM=64, WN=64, STAGES=4)
        out["matmul bf16"] = [("Numba mma.sync v15 (cp.async, ldmatrix, 3 stages)", v15, v15.kernel),
                              ("Numba mma.sync v16 (warp tiles 64x64, 4 stages)", v16, v16.kernel)]
    return out


def numba_arrays(args, smoke):
    """The arguments as Numba takes them: tensors become NumPy views (the simulator, on the CPU) or Numba
    device arrays over the tensors' memory (no copy); other arguments pass unchanged."""
    import torch
    from numba import cuda

    if any(isinstance(arg, torch.Tensor) and arg.dtype == torch.bfloat16 for arg in args):
        return tuple(args)  # the tensor-core launchers take PyTorch tensors (they read their data pointers)

    def convert(arg):
        if not isinstance(arg, torch.Tensor):
            return arg
        return arg.numpy() if smoke else cuda.as_cuda_array(arg)

    return tuple(convert(arg) for arg in args)


def cpp_versions(module, tensorcore):
    versions = {
        "matmul": [("CUDA C++ tiled 16x16 (static shared)",
                    lambda a, b, c: module.matmul_tiled_launch(a, b, c, 16), None)],
        "softmax": [("CUDA C++ one block per row (256 threads)", module.softmax_rows_launch, None)],
        "attention": [("CUDA C++ flash, one thread per row", lambda q, k, v, o, lse, causal:
                       module.flash_smem_launch(q, k, v, o, lse, causal), None)],
    }
    if tensorcore is not None:
        versions["matmul bf16"] = [("CUDA C++ mma.sync (cp.async, ldmatrix, 3 stages)",
                                    tensorcore.mma_bf16_launch, None)]
    return versions


def triton_versions(smoke):
    from course.kernels import triton_kernels as tk

    tile = dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16) if smoke else {}
    flash_tiles = (16, 16, 4) if smoke else "autotune"
    bf16_tiles = (16, 16, 16, 1, 1) if smoke else "autotune"
    return {
        "matmul": [("Triton tiles + tl.dot (ieee fp32)", lambda a, b, c: tk.matmul(a, b, c, **tile),
                    "matmul")],
        "matmul bf16": [("Triton tl.dot bf16 (autotuned tiles)",
                         lambda a, b, c: tk.matmul_bf16(a, b, c, tiles=bf16_tiles), "matmul bf16")],
        "softmax": [("Triton one program per row", tk.softmax, "softmax")],
        "attention": [("Triton flash (tl.dot ieee, autotuned tiles)",
                       lambda q, k, v, o, lse, causal: tk.flash_attention(q, k, v, o, lse, causal=causal,
                                                                          tiles=flash_tiles), "flash")],
    }


def torch_versions(torch, smoke, code_sink):
    import torch.nn.functional as F

    def softmax_into(x, out):
        out.copy_(torch.softmax(x, dim=1))  # Inductor fuses the copy: its one kernel writes into `out`

    # dynamic=False: a kernel specialised to each shape, as the hand-written ones are launched
    compiled = None if smoke else torch.compile(softmax_into, dynamic=False)

    def capture(x):
        from torch._inductor.utils import run_and_get_code

        _, codes = run_and_get_code(compiled, x, torch.empty_like(x))
        code_sink["torch.compile softmax"] = "\n\n".join(codes)

    bf16_outputs = {}

    def cublas_bf16(a, b, c):
        """cuBLAS writes bf16 (its own output type) into a buffer kept per shape; the check reads it."""
        out = bf16_outputs.setdefault(c.shape, torch.empty(c.shape, device=c.device, dtype=torch.bfloat16))
        return torch.matmul(a, b, out=out)

    out = {
        "matmul": [("cuBLAS (torch.matmul, TF32 off)", lambda a, b, c: torch.matmul(a, b, out=c), None)],
        "matmul bf16": [("cuBLAS bf16 (torch.matmul, bf16 output)", cublas_bf16, None)],
        "softmax": [("torch.softmax", lambda x, out: torch.softmax(x, dim=1, out=out), None)],
        "attention": [("PyTorch SDPA (fused)", lambda q, k, v, o, lse, causal: o.copy_(
            F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]), None)],
    }
    if compiled is not None:
        out["softmax"].append(("torch.compile(softmax): generated Triton", compiled, capture))
    return out


# ----------------------------------------------------------------------------------------------- inputs


def problems(torch, device, smoke):
    gen = torch.Generator(device="cpu").manual_seed(0)

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=gen) * scale).to(device)

    n = 32 if smoke else 4096
    a, b = randn(n, n), randn(n, n)
    out = [{"family": "matmul", "shape": f"{n}^3", "args": (a, b), "make_out": lambda: torch.empty(n, n,
                                                                                                    device=device),
            "ref": (a.double() @ b.double()), "flops": 2.0 * n**3, "bytes": 3 * 4 * n * n}]
    if not smoke:  # Triton 3.9's interpreter multiplies bf16 tiles wrongly, and Numba's mma needs a GPU
        a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
        out.append({"family": "matmul bf16", "shape": f"{n}^3 bf16", "args": (a16, b16),
                    "make_out": lambda: torch.empty(n, n, device=device), "ref": a16.double() @ b16.double(),
                    "flops": 2.0 * n**3, "bytes": 2 * 2 * n * n + 4 * n * n})
    for rows, cols in ([(8, 100), (3, 257)] if smoke else [(4096, 4096), (16384, 1024)]):
        x = randn(rows, cols, scale=10.0)
        out.append({"family": "softmax", "shape": f"{rows}x{cols}", "args": (x,),
                    "make_out": lambda r=rows, c=cols: torch.empty(r, c, device=device),
                    "ref": torch.softmax(x.double(), dim=1), "flops": 5.0 * rows * cols,
                    "bytes": 2 * 4 * rows * cols})
    bh, length, d = (2, 32, 16) if smoke else (16, 4096, 64)
    q, k, v = randn(bh, length, d), randn(bh, length, d), randn(bh, length, d)
    for causal in (False, True):
        s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(d)
        if causal:
            s = s.masked_fill(torch.ones(length, length, dtype=torch.bool, device=device).triu(1), -math.inf)
        shape = f"BH={bh} N={length} d={d} {'causal' if causal else 'full'}"
        out.append({"family": "attention", "shape": shape,
                    "args": (q, k, v), "causal": causal,
                    "make_out": lambda: (torch.empty(bh, length, d, device=device),
                                         torch.empty(bh, length, device=device)),
                    "ref": torch.softmax(s, dim=-1) @ v.double(),
                    "flops": 4.0 * bh * length * length * d * (0.5 if causal else 1.0),
                    "bytes": 4 * 4 * bh * length * d})
    return out


# -------------------------------------------------------------------------------------------- artifacts


def numba_artifacts(kernel, asm_dir: Path, name: str) -> dict:
    """PTX and SASS of a compiled Numba kernel (all its specialisations), registers per thread."""
    info = {}
    for ptx in kernel.inspect_asm().values():
        (asm_dir / f"{name}.ptx").write_text(ptx)
        info["ptx_lines"] = ptx.count("\n")
        break
    try:
        for sass in kernel.inspect_sass().values():
            (asm_dir / f"{name}.sass").write_text(sass)
            info["sass_lines"] = sass.count("\n")
            break
    except Exception as error:  # noqa: BLE001 (nvdisasm may be missing: the rest still counts)
        info["sass_error"] = f"{type(error).__name__}: {error}"[:200]
    try:
        regs = kernel.get_regs_per_thread()
        info["registers"] = list(regs.values())[0] if isinstance(regs, dict) else regs
    except Exception:  # noqa: BLE001
        pass
    return info


def triton_artifacts(compiled, asm_dir: Path, name: str) -> dict:
    info = {}
    for key in ("ttir", "ptx"):
        if key in compiled.asm:
            (asm_dir / f"{name}.{key}").write_text(compiled.asm[key])
            info[f"{key}_lines"] = compiled.asm[key].count("\n")
    try:
        sass = compiled.asm["sass"]
        (asm_dir / f"{name}.sass").write_text(sass)
        info["sass_lines"] = sass.count("\n")
    except Exception as error:  # noqa: BLE001
        info["sass_error"] = f"{type(error).__name__}: {error}"[:200]
    for key in ("n_regs", "n_spills"):
        if getattr(compiled, key, None) is not None:
            info[key] = getattr(compiled, key)
    info["num_warps"] = compiled.metadata.num_warps
    info["shared_bytes"] = compiled.metadata.shared
    return info


def autotune_facts(tuned, causal: bool) -> dict:
    """The autotuner's choice for the sizes it tuned last and, per configuration, its median time and the
    registers and spills of its compiled kernel (read from the kernel cache of the Triton function)."""
    def label(kwargs, warps, stages):
        return f"BLOCK_M={kwargs['BLOCK_M']} BLOCK_N={kwargs['BLOCK_N']} warps={warps} stages={stages}"

    configs = {label(c.kwargs, c.num_warps, c.num_stages): {"ms": timing[0]}
               for c, timing in tuned.configs_timings.items()}
    best = tuned.best_config
    facts = {"best": label(best.kwargs, best.num_warps, best.num_stages), "configs": configs}
    try:
        names = tuned.fn.arg_names
        for cache in tuned.fn.device_caches.values():
            for kernel in cache[0].values():
                constants = {names[key[0]]: value for key, value in kernel.src.constants.items()
                             if len(key) == 1}
                if constants.get("CAUSAL") != causal:
                    continue
                kernel._init_handles()
                name = label(constants, kernel.metadata.num_warps, kernel.metadata.num_stages)
                configs.setdefault(name, {}).update(n_regs=kernel.n_regs, n_spills=kernel.n_spills)
    except Exception as error:  # noqa: BLE001 (Triton's internals change between versions: the times stand)
        facts["registers_error"] = f"{type(error).__name__}: {error}"[:200]
    return facts


def nvcc_artifacts(asm_dir: Path) -> dict:
    """PTX and SASS of kernels.cu from nvcc (GPU machine), with ptxas's register report."""
    from course.kernels import cuda_cpp

    info = {}
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "kernels.cu"
        source.write_text(cuda_cpp.kernels_source() + "\n" + (cuda_cpp.HERE / "tensorcore.cu").read_text())
        start = time.perf_counter()
        ptx = subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-lineinfo", "-ptx", str(source), "-o",
                              str(asm_dir / "cuda_cpp_kernels.ptx")], capture_output=True, text=True)
        info["nvcc_ptx_s"] = time.perf_counter() - start
        cubin = Path(tmp) / "kernels.cubin"
        done = subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-cubin", "-Xptxas", "-v", str(source), "-o",
                               str(cubin)], capture_output=True, text=True)
        (asm_dir / "cuda_cpp_ptxas.txt").write_text(done.stderr)
        info["ptxas_registers"] = {m[0]: int(m[1]) for m in re.findall(
            r"Compiling entry function '(\S+)'.*?Used (\d+) registers", done.stderr, re.S)}
        if ptx.returncode == 0 and done.returncode == 0:
            sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
            (asm_dir / "cuda_cpp_kernels.sass").write_text(sass)
        else:
            info["error"] = (ptx.stderr + done.stderr)[-500:]
    return info


# ------------------------------------------------------------------------------------------------- main


def main(argv=None):
    args = parse_args(argv)
    setup(args.smoke)
    import torch

    gpu = torch.cuda.is_available() and not args.smoke
    if not gpu and not args.smoke:
        raise SystemExit("no GPU here: run with --smoke for the CPU check")
    device = torch.device("cuda" if gpu else "cpu")
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    out_dir = Path(args.out)
    asm_dir = out_dir / asm_dir_name(result_tag(torch, gpu))
    asm_dir.mkdir(parents=True, exist_ok=True)
    clock = Clock(torch, gpu)
    code_sink, compile_info = {}, {}
    families = {"matmul": [], "matmul bf16": [], "softmax": [], "attention": []}

    def add(language, versions):
        for family, items in versions.items():
            families[family] += [(language, *item) for item in items]

    if "Numba" in args.languages:
        add("Numba", numba_versions(args.smoke))
    if "Triton" in args.languages:
        add("Triton", triton_versions(args.smoke))
    if gpu and "CUDA C++" in args.languages:
        from course.kernels import cuda_cpp

        try:
            module, seconds = cuda_cpp.load(build_directory=None)
            compile_info["CUDA C++ load_inline (nvcc + ninja, all kernels)"] = {"seconds": seconds}
            tensorcore = None
            try:
                tensorcore, seconds = cuda_cpp.load_tensorcore(build_directory=None)
                compile_info["CUDA C++ load_inline (tensorcore.cu)"] = {"seconds": seconds}
            except Exception as error:  # noqa: BLE001 (the fp32 kernels still run)
                compile_info["CUDA C++ load_inline (tensorcore.cu)"] = {
                    "error": f"{type(error).__name__}: {error}"[-1500:]}
            add("CUDA C++", cpp_versions(module, tensorcore))
        except Exception as error:  # noqa: BLE001 (the other languages still run)
            compile_info["CUDA C++ load_inline"] = {"error": f"{type(error).__name__}: {error}"[-1500:]}
            print(f"CUDA C++ could not be built: {error}", flush=True)
        try:
            compile_info["CUDA C++ nvcc artifacts"] = nvcc_artifacts(asm_dir)
        except Exception as error:  # noqa: BLE001
            compile_info["CUDA C++ nvcc artifacts"] = {"error": f"{type(error).__name__}: {error}"[:300]}
    if "PyTorch" in args.languages:
        add("PyTorch", torch_versions(torch, args.smoke, code_sink))
    only = [x for x in args.only.split(",") if x]
    rows = []
    for problem in problems(torch, device, args.smoke):
        for language, name, fn, extra in families[problem["family"]]:
            if only and not any(x in name for x in only):
                continue
            row = {"family": problem["family"], "shape": problem["shape"], "language": language, "name": name}
            try:
                result = problem["make_out"]()
                outputs = result if isinstance(result, tuple) else (result,)
                for t in outputs:
                    t.fill_(float("nan"))
                causal = (problem["causal"],) if "causal" in problem else ()
                call_args = (*problem["args"], *outputs, *causal)
                if language == "Numba":  # converted once, outside the timed call
                    call = functools.partial(fn, *numba_arrays(call_args, args.smoke))
                else:
                    call = functools.partial(fn, *call_args)
                row["first_call_s"], returned = clock.first_call(call)
                mine = isinstance(returned, torch.Tensor) and returned.shape == outputs[0].shape
                got = (returned if mine else outputs[0]).double()  # cuBLAS bf16 returns its own output
                ref = problem["ref"]
                row["rel_err"] = (torch.linalg.norm(got - ref) / torch.linalg.norm(ref)).item() \
                    if torch.isfinite(got).all() else float("nan")
                ms = clock.median_ms(call)
                if ms is not None:
                    row.update(ms=ms, tflops=problem["flops"] / ms / 1e9, gbps=problem["bytes"] / ms / 1e6,
                               host_ms=clock.host_ms(call))
                if gpu and language == "Numba":  # what converting the tensors in every call would cost
                    def converting(fn=fn, call_args=call_args):
                        return fn(*numba_arrays(call_args, False))

                    row.update(ms_converting_each_call=clock.median_ms(converting),
                               host_ms_converting_each_call=clock.host_ms(converting))
                if gpu:
                    try:
                        row.update(artifacts(language, name, call, extra, asm_dir, problem))
                    except Exception as error:  # noqa: BLE001 (the measurement stands without them)
                        row["artifact_error"] = f"{type(error).__name__}: {error}"[:300]
            except Exception as error:  # noqa: BLE001 (a failing version must not stop the others)
                row["error"] = f"{type(error).__name__}: {error}"[:500]
            rows.append(row)
            shown = f"{row['ms']:9.3f} ms" if "ms" in row else ("error" if "error" in row else "")
            print(f"{problem['shape']:28s} {name:52s} {shown} err {row.get('rel_err', float('nan')):.1e} "
                  f"{row.get('error', '')}", flush=True)
    for name, code in code_sink.items():
        (asm_dir / (re.sub(r"\W+", "_", name) + ".py")).write_text(code)
    if args.keep:
        rows, compile_info = carried_over(Path(args.keep), rows, compile_info, args.languages)
    write(out_dir, rows, compile_info, torch, gpu, args.smoke)
    return rows


def carried_over(path: Path, rows, compile_info, languages):
    """This run's rows and compile facts, with those of the earlier result file `path` for the languages not
    measured now (marked with the run they come from), in the earlier file's order."""
    earlier = json.loads(path.read_text())
    origin = earlier["provenance"]
    kept = {"kept_from": f"{origin['date']}: {origin['command']}"}
    fresh, merged = list(rows), []
    for old in earlier["results"]:
        if old["language"] not in languages:
            merged.append(old if "kept_from" in old else {**old, **kept})
            continue
        same = [row for row in fresh if (row["shape"], row["language"]) == (old["shape"], old["language"])]
        if same:
            merged.append(same[0])
            fresh.remove(same[0])
    for row in fresh:  # versions the earlier file does not have: after their language's rows of that shape
        places = [i for i, r in enumerate(merged) if r["shape"] == row["shape"]]
        places = [i for i in places if merged[i]["language"] == row["language"]] or places
        merged.insert(max(places, default=len(merged) - 1) + 1, row)
    facts = {key: value if "kept_from" in value else {**value, **kept}
             for key, value in earlier.get("compile", {}).items()
             if key.startswith("CUDA C++") and "CUDA C++" not in languages}
    return merged, {**facts, **compile_info}


_done_artifacts: set = set()


def artifacts(language, name, call, extra, asm_dir, problem) -> dict:
    """Compile-side facts of a version, recorded once per version (its first problem)."""
    key = (language, name, problem.get("causal", False))
    if key in _done_artifacts:
        return {}
    _done_artifacts.add(key)
    tag = re.sub(r"\W+", "_", f"{language} {name} {'causal' if problem.get('causal') else ''}").strip("_")
    if language == "Numba" and extra is not None:
        kernel = extra[problem["causal"]] if isinstance(extra, dict) else extra
        return numba_artifacts(kernel, asm_dir, tag)
    if language == "Triton":
        info = triton_artifacts(call(), asm_dir, tag)  # a launch returns the CompiledKernel it ran
        from course.kernels import triton_kernels as tk

        if extra == "flash":
            info["autotune"] = autotune_facts(tk.flash_tuned, problem["causal"])
        if extra == "matmul bf16" and getattr(tk.matmul_bf16_tuned, "best_config", None) is not None:
            best = tk.matmul_bf16_tuned.best_config
            info["autotune"] = {"best": f"{best.kwargs} warps={best.num_warps} stages={best.num_stages}",
                                "configs": {f"{c.kwargs} warps={c.num_warps} stages={c.num_stages}":
                                            {"ms": timing[0]}
                                            for c, timing in tk.matmul_bf16_tuned.configs_timings.items()}}
        return info
    if language == "PyTorch" and callable(extra):
        extra(*problem["args"])
        return {"generated_code": f"{asm_dir.name}/torch_compile_softmax.py"}
    return {}


def asm_dir_name(tag: str) -> str:
    return f"gpu_languages_asm_{tag}"


def result_tag(torch, gpu) -> str:
    """The device tag result files carry (bench.common's), or `cpusmoke` for the CPU smoke test."""
    from bench.common import tag_of

    return tag_of(torch.cuda.get_device_name()) if gpu else "cpusmoke"


def write(out_dir: Path, rows, compile_info, torch, gpu, smoke):
    from bench.common import provenance

    tag = result_tag(torch, gpu)
    device = torch.cuda.get_device_name() if gpu else "CPU (smoke test: interpreter, simulator, tiny sizes)"
    versions = {}
    for module in ("numba", "numba_cuda", "triton"):
        try:
            versions[module] = __import__(module).__version__
        except Exception:  # noqa: BLE001
            versions[module] = None
    meta = {"device": device, "torch": torch.__version__, **versions, "dtype": "float32", "tf32": False,
            "timing": "CUDA events (bench.common.time_ms), median of repeats after a warm-up call (the "
                      "warm-up compiles); Numba's arrays are made from the tensors once, outside the timed "
                      "call",
            "host_ms": "median wall time until a call returns, the GPU idle before it (the CPU's share)",
            "error": "relative Frobenius error against float64, output poisoned with NaN first",
            "smoke": smoke}
    (out_dir / f"gpu_languages_{tag}.json").write_text(json.dumps(
        {"meta": meta, "compile": compile_info, "results": rows, "asm": f"{out_dir.name}/{asm_dir_name(tag)}",
         "provenance": provenance(device)}, indent=1, default=str))
    lines = [f"one kernel in three languages on {device}"]
    for row in rows:
        shown = f"{row['ms']:9.3f} ms {row.get('tflops', 0):7.2f} TFLOP/s {row.get('gbps', 0):7.0f} GB/s" \
            if "ms" in row else row.get("error", "(not timed)")
        regs = row.get("registers", row.get("n_regs", ""))
        err, first = row.get("rel_err", float("nan")), row.get("first_call_s", float("nan"))
        host = f"  host {row['host_ms']:.3f} ms" if row.get("host_ms") is not None else ""
        kept = "  (kept from an earlier run)" if "kept_from" in row else ""
        lines.append(f"{row['shape']:28s} {row['name']:52s} {shown}  err {err:.1e}  first call {first:.2f} s"
                     f"  regs {regs}{host}{kept}")
    (out_dir / f"gpu_languages_{tag}.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
