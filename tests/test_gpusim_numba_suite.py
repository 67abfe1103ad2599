"""A quick part of `make gpusim-numba-suite`: a few of numba-cuda's own installed tests from each family of
features that gpusim had refused or got wrong (issue #30), run by bench/numba_suite under Numba's simulator
with every launch also under gpusim, checked and unchecked. Every launch must give the reference's result."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.numba_suite.classes import classify

ROOT = Path(__file__).resolve().parents[1]
CUDAPY, DOCS = "numba.cuda.tests.cudapy", "numba.cuda.tests.doc_examples"
FAMILIES = {
    "ufuncs over whole arrays": ["test_ufuncs.TestBasicTrigUFuncs.test_sin_ufunc"],
    "cuda.fp16 intrinsics": ["test_intrinsics.TestCudaIntrinsic.test_hadd",
                             "test_intrinsics.TestCudaIntrinsic.test_hfma"],
    "cache-hint loads and stores": ["test_cache_hints.TestCacheHints.test_stores"],
    "alignment=": ["test_array_alignment.TestArrayAddressAlignment.test_invalid_aligments"],
    "bit intrinsics and cbrt": ["test_intrinsics.TestCudaIntrinsic.test_popc_u4",
                                "test_intrinsics.TestCudaIntrinsic.test_brev_u4",
                                "test_intrinsics.TestCudaIntrinsic.test_ffs_i4",
                                "test_intrinsics.TestCudaIntrinsic.test_cbrt_f64"],
    "reshape, view and copy": ["test_array.TestCudaArray.test_array_reshape",
                               "test_array_methods.TestCudaArrayMethods.test_array_copy"],
    "declare_device with a model": ["test_device_func.TestDeclareDevice.test_link_cu_source",
                                    f"{DOCS}.test_ffi.TestFFI.test_ex_linking_cu"],
    "@overload": ["test_overload.TestOverload.test_cuda",
                  "test_overload.TestOverload.test_generic_calls_cuda"],
    "record fields": ["test_record_dtype.TestRecordDtype.test_set_a",
                      "test_record_dtype.TestNestedArrays.test_record_read_array",
                      "test_alignment.TestAlignment.test_record_alignment"],
    "cooperative groups": ["test_cooperative_groups.TestCudaCooperativeGroups.test_sync_group"],
    "tuple-of-arrays": ["test_array_args.TestCudaArrayArg.test_tuple_of_arrays"],
    "match and eq sync": ["test_warp_ops.TestCudaWarpOperations.test_match_any_sync",
                          "test_warp_ops.TestCudaWarpOperations.test_match_all_sync"],
    "compare_and_swap": ["test_atomics.TestCudaAtomics.test_atomic_compare_and_swap"],
    "Enum arguments": ["test_enums.EnumTest.test_compare"],
    "libdevice": ["test_libdevice.TestLibdevice.test_sincos"],
    "real and imag": ["test_complex.TestAtomicOnComplexComponents.test_atomic_on_real"],
    "math.trunc": ["test_math.TestCudaMath.test_math_trunc_non_float64"],
    "same-value stores": ["test_inline.TestCudaInline.test_call_inline_always",
                          "test_launch_config_sensitive.TestLaunchConfigSensitive"],
    "globals frozen at compile time": [f"{DOCS}.test_globals.TestGlobals"],
    "division by zero": ["test_exception.TestException.test_no_zero_division_error",
                         "test_exception.TestException.test_zero_division_error_in_debug"],
}


def _dotted(name):
    return name if name.startswith("numba.") else f"{CUDAPY}.{name}"


@pytest.fixture(scope="module")
def launches(tmp_path_factory):
    """Every launch of the chosen tests, as bench/numba_suite/child.py records them."""
    out = tmp_path_factory.mktemp("numba_suite") / "launches.jsonl"
    names = [_dotted(name) for family in FAMILIES.values() for name in family]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "bench.numba_suite.child", str(out), *names]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return [record for record in map(json.loads, out.read_text().splitlines()) if "kernel" in record]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_launch_of_the_family_gives_the_references_result(launches, family):
    tests = tuple(_dotted(name) for name in FAMILIES[family])
    mine = [record for record in launches if record["test"].startswith(tests)]
    assert mine, f"no launch of {family}: {tests}"
    for record in mine:
        for mode in ("checked", "unchecked"):
            kind, detail = classify(record, mode)
            assert kind == "same", f"{record['test']} ({mode}): {kind}: {detail}"
