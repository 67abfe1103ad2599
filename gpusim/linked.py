"""Stand-ins for linked device functions: a kernel that calls CUDA C++ through `cuda.declare_device`
runs in gpusim with a NumPy model of that function in its place.

A model is registered by the declared name (`@stand_in("name")`).  Warp-collective instructions, such as
the tensor cores' `mma.sync`, gather the 32 lanes' operands first: each lane leaves its arguments in a
slot of its warp and waits at a `cuda.syncwarp()`; then every lane computes its own result from all the
slots, and a second `syncwarp` keeps a fast lane from overwriting its slot before the others have read it.
(So the race checker sees the instruction order its lanes, as a `syncwarp` does.)

Known models: `mma_bf16_16816` (mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, see MMA_LAYOUT).
"""

import weakref

import numpy as np

from .context import WARP_SIZE, current, who
from .errors import UnsupportedError
from .fakecuda import FULL_MASK

MODELS = {}
DECLARATIONS = ("ExternFunction", "DeclaredDevice")  # numba's cuda.declare_device, or a simulator stand-in


class LinkedFunctionError(UnsupportedError):
    """A kernel calls a linked device function that gpusim cannot run (`feature` names it)."""

    hint = ("gpusim runs linked CUDA C++ only through a NumPy model registered with "
            "gpusim.stand_in(name); write one, or test this kernel on a GPU.")


def stand_in(name):
    """Register the decorated function as the model of the linked device function `name`."""

    def register(model):
        MODELS[name] = model
        return model

    return register


def model_for(value):
    """The model to call in place of `value` if it is a declared device function, else None."""
    if type(value).__name__ not in DECLARATIONS:
        return None
    name = getattr(value, "name", None)
    model = MODELS.get(name)
    if model is None:
        def missing(*args):
            raise LinkedFunctionError(f"the linked device function {name} (no model registered)",
                                      f"{who()} calls the linked device function {name!r}, which has no "
                                      f"model in gpusim (models: {', '.join(sorted(MODELS))}).")
        return missing
    return model


class _Cffi:
    """A kernel's cffi FFI object: `ffi.from_buffer(array)` gives the array itself, which is what a model
    receives for a pointer argument."""

    @staticmethod
    def from_buffer(array, *args, **kwargs):
        return array


def cffi_stand_in(value):
    """The stand-in for a cffi FFI object, else None."""
    kind = type(value)
    if kind.__name__ == "FFI" and (kind.__module__ or "").partition(".")[0] == "cffi":
        return _Cffi
    return None


_launch = {"scheduler": lambda: None, "warps": {}}  # the launch the warps' exchange slots belong to


def _warp_rounds():
    """{wepoch: exchange state} of the running thread's warp, fresh for every launch."""
    scheduler = current.scheduler
    if _launch["scheduler"]() is not scheduler:
        _launch.update(scheduler=weakref.ref(scheduler), warps={})
    return _launch["warps"].setdefault((tuple(current.block), current.thread.warp), {})


def warp_collective(name, operands, compute):
    """Run a warp-wide instruction: wait until the 32 lanes of this warp have given their operands, let
    `compute({lane: operands})` (called once per warp) produce every lane's result, return this lane's."""
    thread = current.thread
    rounds = _warp_rounds()
    for old in [w for w in rounds if w < thread.wepoch]:  # a lane this far on: everyone left those rounds
        del rounds[old]
    state = rounds.setdefault(thread.wepoch, {"operands": {}, "results": None})
    state["operands"][thread.lane] = operands
    current.scheduler.warp("syncwarp", FULL_MASK, None, None)
    lanes = state["operands"]
    if len(lanes) != WARP_SIZE:
        raise LinkedFunctionError(f"{name} with fewer than {WARP_SIZE} lanes",
                                  f"{who()} runs {name} with {len(lanes)} lanes of its warp; the instruction "
                                  f"needs all {WARP_SIZE} (launch whole warps, with no lane returned early).")
    if state["results"] is None:
        state["results"] = compute(lanes)
    mine = state["results"][thread.lane]
    current.scheduler.warp("syncwarp", FULL_MASK, None, None)  # release: everyone has its result
    return mine


def _layout():
    """(row, column) of each element each lane holds, per the PTX ISA's m16n8k16 fragments.

    Lane l = 4g + t.  A (16x16, row-major): register r in 0..3 holds row g + 8 (r % 2), columns
    2t + 8 (r // 2) + h for its low (h = 0) and high (h = 1) bf16.  B (16x8, "col"): register r in 0..1
    holds rows 2t + 8r + h of column g.  C and D (16x8, fp32): register r in 0..3 holds row g + 8 (r // 2),
    column 2t + r % 2.
    """
    lanes = np.arange(WARP_SIZE)
    g, t = lanes // 4, lanes % 4
    a = np.zeros((WARP_SIZE, 4, 2, 2), int)
    b = np.zeros((WARP_SIZE, 2, 2, 2), int)
    c = np.zeros((WARP_SIZE, 4, 2), int)
    for r in range(4):
        for h in range(2):
            a[:, r, h] = np.stack([g + 8 * (r % 2), 2 * t + 8 * (r // 2) + h], axis=1)
        c[:, r] = np.stack([g + 8 * (r // 2), 2 * t + r % 2], axis=1)
    for r in range(2):
        for h in range(2):
            b[:, r, h] = np.stack([2 * t + 8 * r + h, g], axis=1)
    return dict(A=a, B=b, C=c)


MMA_LAYOUT = _layout()


def bf16_pairs(words):
    """The two bfloat16 numbers packed in each 32-bit register, low half first: float32, shape (..., 2)."""
    bits = (np.asarray(words, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)
    return np.stack([bits << 16, bits & 0xFFFF0000], axis=-1).view(np.float32)


def mma_m16n8k16(lanes):
    """Every lane's 4 results of D = A B + C from the 32 lanes' (a0..a3, b0, b1, c0..c3)."""
    ops = np.array([lanes[lane] for lane in range(WARP_SIZE)], dtype=object)
    lay = MMA_LAYOUT
    A, B, C = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
    A[lay["A"][..., 0], lay["A"][..., 1]] = bf16_pairs(ops[:, 0:4].astype(np.int64))
    B[lay["B"][..., 0], lay["B"][..., 1]] = bf16_pairs(ops[:, 4:6].astype(np.int64))
    C[lay["C"][..., 0], lay["C"][..., 1]] = ops[:, 6:10].astype(np.float32)
    D = (A @ B + C).astype(np.float32)  # exact products, one rounding to fp32
    return [tuple(D[lay["C"][lane, :, 0], lay["C"][lane, :, 1]]) for lane in range(WARP_SIZE)]


@stand_in("mma_bf16_16816")
def mma_bf16_16816(a0, a1, a2, a3, b0, b1, c0, c1, c2, c3):
    """mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: this lane's 4 accumulators of D = A B + C."""
    return warp_collective("mma.sync m16n8k16", (a0, a1, a2, a3, b0, b1, c0, c1, c2, c3), mma_m16n8k16)
