"""Hopper's GEMM rungs (course/kernels/hopper.py) as far as they run without a GPU: the CUDA C++ compiles for
sm_90a, Numba compiles the generated kernels for compute capability 9.0, the
copies the generated code issues put every element where wgmma's descriptors read it (the PTX ISA's
128-byte swizzle, modelled in NumPy), and the epilogue writes each output of a tile exactly once. That the
products are right is checked on the GPU, against float64 (bench/gpu_matmul_hopper.py)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_hopper_probe import _ptx

from course.kernels import hopper
from gpusim import WgmmaDescriptor, wgmma_operand


def test_the_device_functions_compile_for_sm_90a():
    built, ptx = _ptx(hopper.source(), "compute_90a")
    assert built, ptx
    for instruction in ("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "wgmma.fence.sync.aligned",
                        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                        "mbarrier.try_wait.parity.shared::cta.b64",
                        "mbarrier.arrive.expect_tx.shared::cta.b64",
                        "setmaxnreg.dec.sync.aligned.u32", "fence.proxy.tensormap::generic.acquire.gpu",
                        "cp.async.cg.shared.global", "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
                        "bar.arrive", "cvt.rn.bf16x2.f32"):
        assert instruction in ptx, instruction
    assert ".target sm_90a" in ptx  # the warpgroup instructions are sm_90a's ("a": not in later GPUs)


COMPILE = """
from numba import cuda, int32, uint64
from course.kernels import hopper
from course.kernels.matmul import compile_source
BN = 128  # the 64-accumulator form: the same code as 256, compiled in a third of the time
for loads, persistent in (("cp.async", False), ("tma", True)):  # (19 is 20 without the tile loop)
    if loads == "tma":
        src, threads, shared = hopper._make_tma(128, BN, 4, 8, persistent)
    else:
        src, threads, shared = hopper._make_cp_async(128, BN, 4, 8)
    name = src.split("(")[0][4:]
    fn = compile_source(src, name, dict(hopper.DECLARED.get(BN), U=uint64, I32=int32))
    ptx, _ = cuda.compile_ptx(fn, "void(uint64, uint64, float32[:, ::1], int64)", cc=(9, 0))
    print(loads, persistent, threads, shared, "hp_wgmma_n128" in ptx, "hp_tma_load_2d" in ptx)
from course.kernels.hopper_attention import make_flash_wgmma
flash = make_flash_wgmma()  # (causal adds only the masking lines: not compiled here, to save time)
signature = "void(uint64, uint64, uint64, float32[:, :, ::1], float32[:, ::1], int64, float32)"
ptx, _ = cuda.compile_ptx(flash.kernel.py_func, signature, cc=(9, 0))
linked = ("hp_wgmma_rs_n64", "hp_named_sync", "hp_pack_bf16x2")
print("attention", flash.shared_bytes, all(name in ptx for name in linked))
"""


def test_numba_compiles_the_generated_kernels_for_compute_capability_9():
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", COMPILE], env=env, capture_output=True, text=True,
                          timeout=900, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-3000:]
    stage = 128 * 128 + 128 * 128  # bytes of an A and a B tile of 128 rows of 64 bf16
    assert done.stdout.split("\n")[:3] == [
        f"cp.async False 256 {4 * stage + 1024} True False",  # wgmma linked, no TMA; 1 KiB for alignment
        f"tma True 384 {4 * stage + 4 * 16 + 1024} True True",  # and two mbarriers per stage
        f"attention {128 * 128 + 4 * stage + 4 * 16 + 8 + 1024} True"]  # Q, 4 stages of K and V, barriers


def _run_lines(lines, **names):
    """Execute generated assignment lines (plain integer arithmetic) and return the names they set."""
    scope = dict(names, U=int, I32=int)
    for line in lines:
        exec(line.split("#")[0].strip(), {}, scope)
    return scope


def test_the_cp_async_copies_put_every_element_where_the_descriptors_read_it():
    BM, BN, K = 128, 256, 64
    src, threads, _ = hopper._make_cp_async(BM, BN, 4, 8)
    lines = [line.strip() for line in src.splitlines()]
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**16, (BM, K), dtype=np.uint16)
    b = rng.integers(0, 2**16, (BN, K), dtype=np.uint16)
    shared = np.zeros(BM * 128 + BN * 128, np.uint8)
    for matrix, prefix, rows in ((a, "a", BM), (b, "b", BN)):
        chunks = [i for i, line in enumerate(lines) if re.match(rf"s{prefix}\d+ = ", line)]
        assert len(chunks) * threads == rows * 8  # every 16-byte chunk of the tile, once
        for tid in range(threads):
            for at in chunks:
                scope = _run_lines(lines[at - 3:at + 1], tid=tid, a_ptr=0, b_ptr=0, m0=0, n0=0, K=K)
                name = lines[at].split()[0]  # sa0: the byte in shared memory; ga0: in global memory
                source_byte, target = scope["g" + name[1:]], scope[name]
                flat = matrix.reshape(-1).view(np.uint8)
                shared[target:target + 16] = flat[source_byte:source_byte + 16]
    for warpgroup in range(2):
        for k in range(4):
            a_desc = hopper.descriptor_fields(warpgroup * 64 * 128, k).encode()
            b_desc = hopper.descriptor_fields(BM * 128, k).encode()
            assert np.array_equal(wgmma_operand(shared, a_desc, 64),
                                  a[64 * warpgroup:64 * warpgroup + 64, 16 * k:16 * k + 16])
            assert np.array_equal(wgmma_operand(shared, b_desc, BN), b[:, 16 * k:16 * k + 16])


def test_the_tma_box_layout_is_the_one_the_descriptors_read():
    rows = 64
    tile = np.arange(rows * 64, dtype=np.uint16).reshape(rows, 64)
    shared = np.zeros(rows * 128, np.uint8)
    for r in range(rows):  # what TMA with CU_TENSOR_MAP_SWIZZLE_128B writes for a box of rows x 64 bf16
        for chunk in range(8):
            at = hopper.swizzled_offset(r, chunk)
            shared[at:at + 16] = tile[r, 8 * chunk:8 * chunk + 8].view(np.uint8)
    for k in range(4):
        got = wgmma_operand(shared, hopper.descriptor_fields(0, k).encode(), rows)
        assert np.array_equal(got, tile[:, 16 * k:16 * k + 16])


@pytest.mark.parametrize("BN", [128, 256])
def test_the_epilogue_writes_each_output_of_the_tile_once(BN):
    src, threads, _ = hopper._make_tma(128, BN, 4, 8)
    lines = [line.strip() for line in src.splitlines()]
    start = lines.index("lane = tid & 31")
    written = np.zeros((128, BN), int)

    class Recorder:
        shape = (128, BN)

        def __setitem__(self, where, value):
            written[where] += 1

    for tid in range(128, threads):  # the two consumer warpgroups
        _run_lines(lines[start:], tid=tid, m0=0, n0=0, w=tid // 128 - 1, C=Recorder(),
                   **{f"c{i}": 0.0 for i in range(BN // 2)})
    assert (written == 1).all()


def test_p_goes_from_the_score_accumulators_to_the_register_operand_unchanged():
    """The attention kernel packs S's accumulators into wgmma's register A operand with no data movement: the
    pair packed into register q of key step kc must hold, in each thread, exactly the elements the A fragment
    layout puts there (per warp, m16n8k16's: register q has row g + 8 (q % 2), k 2 t + 8 (q // 2) and + 1),
    given the accumulator layout (accumulator 4 j + r: row g + 8 (r // 2), column 8 j + 2 t + r % 2)."""
    from course.kernels.hopper_attention import _consumer

    lines = _consumer(128, 4, False, (0, 0, 0, 0, 0, 0), True, True)
    packs = set()
    for line in lines:
        if found := re.fullmatch(r"p(\d+)_(\d) = pack\(c(\d+), c(\d+)\)", line):
            packs.add(tuple(int(x) for x in found.groups()))
    assert len({(kc, q) for kc, q, _, _ in packs}) == 128 // 16 * 4
    for kc, q, lo, hi in packs:
        for element, accumulator in enumerate((lo, hi)):
            j, r = divmod(accumulator, 4)
            for g in range(8):
                for t in range(4):
                    held = (g + 8 * (r // 2), 8 * j + 2 * t + r % 2)
                    wanted = (g + 8 * (q % 2), 16 * kc + 2 * t + 8 * (q // 2) + element)
                    assert held == wanted, (kc, q, element)


def test_the_v_tile_is_read_mn_major_through_the_attention_descriptor():
    keys = 128
    v = np.random.default_rng(1).integers(0, 2**16, (keys, 64), dtype=np.uint16)  # [key][dim], as copied
    shared = np.zeros(keys * 128, np.uint8)
    for key in range(keys):
        for chunk in range(8):
            at = hopper.swizzled_offset(key, chunk)
            shared[at:at + 16] = v[key, 8 * chunk:8 * chunk + 8].view(np.uint8)
    for step in range(keys // 16):  # B of O += P V: n = the 64 dimensions, k = 16 keys
        got = wgmma_operand(shared, hopper.v_descriptor_fields(0, step).encode(), 64, major="MN")
        assert np.array_equal(got, v[16 * step:16 * step + 16].T)


def test_a_descriptor_encodes_and_decodes_its_fields():
    fields = WgmmaDescriptor(start=0x1F3A0, leading=16, stride=1024, swizzle=1)
    assert WgmmaDescriptor.decode(fields.encode()) == fields
    with pytest.raises(NotImplementedError, match="64-byte"):
        wgmma_operand(np.zeros(2048, np.uint8), WgmmaDescriptor(0, 16, 512, 2).encode(), 8)
