"""The PTX Numba generates for a kernel, on any machine: what the lessons read in it.

    ptx_of(kernel, *example_args)          # PTX text for an H100 (sm_90), in CPU mode too
    float64_lines(ptx)                      # the instructions that compute in float64
    instruction_mix(ptx)                    # instructions by kind: float32 FMA, 64-bit integer, loads...

The kernel is compiled the way the compile gate (:mod:`course.compilegate`) compiles a learner's: its
spec (:mod:`course.kernelsource`) is rebuilt and ``numba.cuda.compile_ptx`` compiles it for the argument
types of `example_args` (arrays, torch tensors or numbers). That needs NVIDIA's NVRTC and NVVM libraries
but no GPU; Numba's simulator must be off in the compiling process, so in CPU mode the compile runs in a
fresh ``python -m course.ptx`` (a few seconds: it imports Numba).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from .compilegate import TARGET_CC, _simulator_on, _target_device, argument_types, signature_of
from .kernelsource import describe, rebuild

ROOT = Path(__file__).resolve().parent.parent
# libdevice's sinf/cosf: the 64-bit step of its reduction of huge arguments (see float64_lines)
LIBDEVICE_REDUCTION = re.compile(r"^mul\.f64\s+(%fd\d+),\s*(%fd\d+),\s*0d3BF921FB54442D19;")
# An instruction line: optional predicate, the opcode with its suffixes, then operands.
INSTRUCTION = re.compile(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)\s")
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


def compile_here(spec, signature) -> str:
    """PTX of a kernel spec for `signature` (compilegate.signature_of data), compiled in this process."""
    import numba.cuda

    if numba.cuda.core.config.ENABLE_CUDASIM:
        raise RuntimeError("compile_here needs a process where NUMBA_ENABLE_CUDASIM is not set")
    kernel = rebuild(spec, device=numba.cuda.jit(device=True))
    with _target_device():
        ptx, _ = numba.cuda.compile_ptx(kernel, argument_types(signature), cc=TARGET_CC)
    return ptx


def ptx_of(kernel, *example_args) -> str:
    """The PTX of `kernel` (a @cuda.jit kernel or a plain function) for the types of `example_args`."""
    spec, signature = describe(kernel), signature_of(example_args)
    if not _simulator_on():
        return compile_here(spec, signature)
    env = {key: value for key, value in os.environ.items()
           if key not in ("NUMBA_ENABLE_CUDASIM", "COURSE_MODE")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-m", "course.ptx"], input=json.dumps([spec, signature]),
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=240)
    if done.returncode != 0:
        raise RuntimeError(f"compiling {kernel.__name__} for its PTX failed:\n{done.stderr[-2000:]}")
    return done.stdout


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
        parts = opcode.split(".")
        opcode = ".".join(parts[:-1])
    elif opcode.startswith(("mul.wide.", "mad.wide.")):
        opcode = opcode[:-3] + "64"
    return next((kind for kind, pattern in KINDS if pattern.search(opcode)), "other")


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


def main():
    """Read [spec, signature] as JSON on stdin, print the PTX."""
    spec, signature = json.loads(sys.stdin.read())
    sys.stdout.write(compile_here(spec, signature))


if __name__ == "__main__":
    main()
