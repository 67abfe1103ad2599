"""The device's properties as the CUDA driver reports them (lesson 00), and two peaks derived from them."""

import torch
from numba import cuda

ATTRIBUTES = {  # driver attribute -> what it means
    "MULTIPROCESSOR_COUNT": "SMs",
    "WARP_SIZE": "threads per warp",
    "MAX_THREADS_PER_BLOCK": "max threads per block",
    "MAX_THREADS_PER_MULTIPROCESSOR": "max threads resident per SM",
    "MAX_BLOCKS_PER_MULTIPROCESSOR": "max blocks resident per SM",
    "MAX_SHARED_MEMORY_PER_BLOCK": "shared memory per block, default (bytes)",
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": "shared memory per block, opt-in (bytes)",
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": "shared memory per SM (bytes)",
    "MAX_REGISTERS_PER_BLOCK": "32-bit registers per block",
    "MAX_REGISTERS_PER_MULTIPROCESSOR": "32-bit registers per SM",
    "L2_CACHE_SIZE": "L2 cache (bytes)",
    "CLOCK_RATE": "max SM clock (kHz)",
    "MEMORY_CLOCK_RATE": "memory clock (kHz)",
    "GLOBAL_MEMORY_BUS_WIDTH": "memory bus width (bits)",
    "COMPUTE_CAPABILITY_MAJOR": "compute capability, major",
    "COMPUTE_CAPABILITY_MINOR": "compute capability, minor",
}
FP32_LANES_PER_SM = {(7, 0): 64, (8, 0): 64}  # compute capability -> FP32 lanes; 128 on the others here
DERIVED = {
    "total_memory_bytes": "global memory (bytes)",
    "derived_fp32_peak_tflops": "FP32 peak: SMs x FP32 lanes x 2 x clock (TFLOP/s)",
    "derived_dram_peak_GBps": "DRAM peak: 2 x memory clock x bus width (GB/s)",
}


def measure():
    """Every attribute above (lower-case keys), the memory size and the derived FP32 and DRAM peaks."""
    device = cuda.get_current_device()
    out = dict(name=torch.cuda.get_device_name(),
               total_memory_bytes=torch.cuda.get_device_properties(0).total_memory,
               compute_capability=list(device.compute_capability))
    for attribute in ATTRIBUTES:
        try:
            out[attribute.lower()] = getattr(device, attribute)
        except Exception as error:  # noqa: BLE001 -- older drivers lack a few attributes
            out[attribute.lower()] = f"n/a ({type(error).__name__})"
    if isinstance(out.get("clock_rate"), int):  # kHz
        lanes = out["multiprocessor_count"] * FP32_LANES_PER_SM.get(tuple(device.compute_capability), 128)
        out["derived_fp32_peak_tflops"] = lanes * 2 * out["clock_rate"] * 1e3 / 1e12
    if isinstance(out.get("memory_clock_rate"), int):
        out["derived_dram_peak_GBps"] = (
            2 * out["memory_clock_rate"] * 1e3 * out["global_memory_bus_width"] / 8 / 1e9
        )
    return out


def show(records):
    """One row per property, one column per device."""
    names = [record.device.replace("NVIDIA ", "") for record in records]
    print(f"{'':52}" + "".join(f"{name:>24}" for name in names))
    rows = {key.lower(): meaning for key, meaning in ATTRIBUTES.items()} | DERIVED
    for key, meaning in rows.items():
        values = [record.data.get(key, "-") for record in records]
        cells = "".join(f"{value:>24,.1f}" if isinstance(value, float) else f"{value!s:>24}"
                        for value in values)
        print(f"{meaning:52}{cells}")
    for record in records:
        print(record.header())
