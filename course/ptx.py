"""The PTX Numba generates for a kernel, on any machine: what the lessons read in it.

    ptx_of(kernel, *example_args)               # PTX text for an H100 (sm_90), in CPU mode too
    ptx_of_all([(kernel, example_args), ...])   # several at once
    float64_lines(ptx)                          # the instructions that compute in float64
    instruction_mix(ptx)                        # instructions by kind: float32 FMA, 64-bit integer, loads...
    innermost_loop(ptx)                         # the smallest loop that holds float32 FMAs
    normalized(ptx)                             # the code alone: comments, debug lines and symbol names out

A kernel is compiled the way the compile gate (:mod:`course.compilegate`) compiles a learner's: its spec
(:mod:`course.kernelsource`) is rebuilt and ``numba.cuda.compile_ptx`` compiles it for the argument types of
`example_args` (arrays, torch tensors or numbers). That needs NVIDIA's NVRTC and NVVM libraries but no GPU.
Numba's simulator must be off in the compiling process, so in CPU mode the compiles run in one helper
process (``python -m course.ptx --serve``), started on first use (a few seconds: it imports Numba) and kept
for the next ones.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

from .compilegate import TARGET_CC, _simulator_on, _target_device, argument_types, signature_of
from .kernelsource import describe, rebuild

ROOT = Path(__file__).resolve().parent.parent
# libdevice's sinf/cosf: the 64-bit step of its reduction of huge arguments (see float64_lines)
LIBDEVICE_REDUCTION = re.compile(r"^mul\.f64\s+(%fd\d+),\s*(%fd\d+),\s*0d3BF921FB54442D19;")
# An instruction line: optional predicate, the opcode with its suffixes, then operands.
INSTRUCTION = re.compile(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)\s")
GENERATED_SYMBOL = re.compile(r"_ZN[\w$]+|_cudapy_\w+?_\d+\b")  # Numba's mangled and numbered names
KINDS = (  # (kind, opcode pattern): the first that matches names an instruction's kind
    ("shared load", re.compile(r"^ld\.shared")),
    ("global load", re.compile(r"^ld\.global")),
    ("parameter load", re.compile(r"^ld\.param")),
    ("store", re.compile(r"^st\.")),
    ("float64", re.compile(r"\.f64(\.|$)")),
    ("float32 FMA", re.compile(r"^fma\.\w+\.f32$")),
    ("float32 other", re.compile(r"\.f32$")),
    ("64-bit integer", re.compile(r"\.[sub]64$")),
    ("32-bit integer", re.compile(r"\.[sub]32$")),
)


# ------------------------------------------------------------------------------------------- compiling


def compile_here(spec, signature) -> str:
    """PTX of a kernel spec for `signature` (compilegate.signature_of data), compiled in this process."""
    import numba.cuda

    if numba.cuda.core.config.ENABLE_CUDASIM:
        raise RuntimeError("compile_here needs a process where NUMBA_ENABLE_CUDASIM is not set")
    kernel = rebuild(spec, device=numba.cuda.jit(device=True))
    with _target_device():
        ptx, _ = numba.cuda.compile_ptx(kernel, argument_types(signature), cc=TARGET_CC)
    return ptx


def _result(spec, signature, want) -> dict:
    """{"ptx": text} or {"float64": lines} as `want` says, or {"error": why it did not compile}."""
    try:
        ptx = compile_here(spec, signature)
    except Exception as error:  # noqa: BLE001 -- a kernel a GPU would refuse: reported, not fatal
        return {"error": f"{type(error).__name__}: {str(error)[-500:]}"}
    return {"ptx": ptx} if want == "ptx" else {"float64": float64_lines(ptx)}


class _Helper:
    """One `python -m course.ptx --serve` process with the simulator off: a JSON request per line in, a
    JSON answer per line out."""

    def __init__(self):
        self.process, self.errors, self.lock = None, None, threading.Lock()

    def run(self, jobs, want) -> list[dict]:
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self._start()
            self.process.stdin.write(json.dumps({"want": want, "jobs": jobs}) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
            if not answer:
                self.errors.seek(0)
                raise RuntimeError(f"the PTX helper process died:\n{self.errors.read()[-3000:]}")
            return json.loads(answer)

    def _start(self):
        env = {key: value for key, value in os.environ.items()
               if key not in ("NUMBA_ENABLE_CUDASIM", "COURSE_MODE", "COURSE_LAUNCH_LOG")}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        self.errors = tempfile.TemporaryFile("w+")
        command = [sys.executable, "-m", "course.ptx", "--serve"]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.errors, text=True, env=env, cwd=ROOT)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=10)


_helper = _Helper()
atexit.register(_helper.stop)


def results_of_specs(jobs, want="ptx") -> list[dict]:
    """For each (spec, signature): {"ptx": text} (or {"float64": lines} with want="float64"), or
    {"error": why it did not compile}."""
    if _simulator_on():
        return _helper.run([list(job) for job in jobs], want)
    return [_result(spec, signature, want) for spec, signature in jobs]


def ptx_of(kernel, *example_args) -> str:
    """The PTX of `kernel` (a @cuda.jit kernel or a plain function) for the types of `example_args`."""
    return ptx_of_all([(kernel, example_args)])[0]


def ptx_of_all(kernels_and_args) -> list[str]:
    """The PTX of each (kernel, example_args) pair."""
    jobs = [(describe(kernel), signature_of(args)) for kernel, args in kernels_and_args]
    texts = []
    for (kernel, _), result in zip(kernels_and_args, results_of_specs(jobs), strict=True):
        if "error" in result:
            raise RuntimeError(f"compiling {kernel.__name__} for its PTX failed: {result['error']}")
        texts.append(result["ptx"])
    return texts


# ------------------------------------------------------------------------------------------- reading


def instructions(ptx):
    """(opcode, line) of every instruction in the PTX text (directives, labels and braces left out)."""
    found = []
    for line in ptx.splitlines():
        match = INSTRUCTION.match(line)
        if match and not line.lstrip().startswith("."):
            found.append((match.group(1), line.strip()))
    return found


def kind_of(opcode):
    """The kind (see KINDS) of an instruction. A conversion is named by the type it produces, and a
    widening multiply (mul.wide, mad.wide) produces 64 bits."""
    if opcode.startswith("cvt.") and ".f64" not in opcode:
        opcode = opcode.rsplit(".", 1)[0]
    elif opcode.startswith(("mul.wide.", "mad.wide.")):
        opcode = opcode[:-2] + "64"
    return next((kind for kind, pattern in KINDS if pattern.search(opcode)), "other")


def float64_lines(ptx):
    """The instructions that compute with, or convert to or from, float64, less libdevice's own: its sine
    and cosine reduce huge float32 arguments (|x| > 105615) with one 64-bit multiply by 2^-64 pi/2 and
    the two conversions around it, which run only for such arguments."""
    lines = [line for opcode, line in instructions(ptx) if kind_of(opcode) == "float64"]
    reduction = set()
    for line in lines:
        match = LIBDEVICE_REDUCTION.search(line)
        if match:
            reduction.update(match.groups())
    return [line for line in lines if not (reduction and reduction.issuperset(re.findall(r"%fd\d+", line)))]


def instruction_mix(ptx):
    """How many instructions of each kind (see KINDS) the PTX holds: a Counter."""
    return Counter(kind_of(opcode) for opcode, _ in instructions(ptx))


def innermost_loop(ptx):
    """The instructions of the smallest loop (a label and a branch back to it) that holds float32 FMAs:
    where a kernel spends its time. Empty if no loop holds one."""
    lines = ptx.splitlines()
    labels = {line.strip()[:-1]: k for k, line in enumerate(lines) if re.match(r"^\$\w+:$", line.strip())}
    best = None
    for k, line in enumerate(lines):
        match = re.search(r"\bbra(?:\.uni)?\s+(\$\w+);", line)
        start = labels.get(match.group(1)) if match else None
        if start is None or start >= k:
            continue
        body = "\n".join(lines[start:k + 1])
        if instruction_mix(body)["float32 FMA"] and (best is None or k - start < best[1] - best[0]):
            best = (start, k)
    return "" if best is None else "\n".join(lines[best[0]:best[1] + 1])


def normalized(ptx):
    """The PTX's code lines with comments, blank and debug lines (.file, .loc) dropped and every generated
    symbol (mangled names, numbered shared arrays) renamed in order of first use: two kernels that compile
    to the same machine code give the same list, whatever their names or source files."""
    names = {}

    def rename(match):
        return names.setdefault(match[0], f"symbol{len(names)}")

    kept = []
    for line in ptx.splitlines():
        text = line.split("//", 1)[0].strip()
        if not text or text.startswith((".file", ".loc")):
            continue
        kept.append(GENERATED_SYMBOL.sub(rename, text))
    return kept


def main():
    """--serve: answer one JSON request per line of stdin ({"want": "ptx" or "float64", "jobs": [[spec,
    signature], ...]}) with one JSON list per line of stdout, until stdin closes."""
    if sys.argv[1:] != ["--serve"]:
        sys.exit(__doc__)
    for line in sys.stdin:
        request = json.loads(line)
        answer = [_result(spec, signature, request["want"]) for spec, signature in request["jobs"]]
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
