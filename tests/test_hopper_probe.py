"""The wgmma probe of bench/hopper_wgmma_probe.py, as far as it runs without a GPU: its CUDA C++ compiles
for sm_90a with NVRTC (the wheel the course installs) into PTX that holds the warpgroup instructions, and
its shared-memory layout puts every element of an operand where the descriptor's offsets say."""

import numpy as np
from cuda.bindings import nvrtc

from bench.hopper.wgmma import source
from bench.hopper_wgmma_probe import core_matrix_order


def _ptx(text: str, arch: str) -> tuple[bool, str]:
    _, program = nvrtc.nvrtcCreateProgram(text.encode(), b"wgmma.cu", 0, [], [])
    options = [f"--gpu-architecture={arch}".encode(), b"-rdc=true"]
    (status,) = nvrtc.nvrtcCompileProgram(program, len(options), options)
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, size = nvrtc.nvrtcGetProgramLogSize(program)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(program, log)
        return False, log.decode()
    _, size = nvrtc.nvrtcGetPTXSize(program)
    ptx = b" " * size
    nvrtc.nvrtcGetPTX(program, ptx)
    return True, ptx.decode()


def test_the_probe_compiles_for_sm_90a_into_the_warpgroup_instructions():
    built, ptx = _ptx(source(), "compute_90a")
    assert built, ptx
    assert ".target sm_90a" in ptx
    for instruction in ("wgmma.fence.sync.aligned", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
                        "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned",
                        "fence.proxy.async.shared::cta"):
        assert instruction in ptx, instruction


def test_core_matrix_order_puts_each_element_where_the_descriptor_offsets_point():
    rows = 64
    matrix = np.arange(rows * 16, dtype=np.uint16).reshape(rows, 16)
    laid = core_matrix_order(matrix)
    leading, stride = 128 // 2, 256 // 2  # the descriptor's byte offsets, in bf16 elements
    for row in range(rows):
        for k in range(16):
            at = (row // 8) * stride + (k // 8) * leading + (row % 8) * 8 + k % 8
            assert laid[at] == matrix[row, k]
