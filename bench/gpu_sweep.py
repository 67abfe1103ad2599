"""Device properties, memory bandwidth (coalesced and strided Numba copies, the device-to-device ceiling),
and torch.matmul throughput against size (float32 with TF32 off, and float16) with the kernels cuBLAS
launched around the 1792 cliff.

Usage:  python3 bench/gpu_sweep.py [--out DIR] [--quick]
Writes gpu_props_<dev>.json, gpu_bandwidth_<dev>.json, gpu_matmul_sweep_<dev>.json and .png into --out.
The measurements are the functions lesson 00, 04 and 05 call in GPU mode (bench/lesson_cells/).
"""

import argparse
import os
import sys
import traceback

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import matplotlib  # noqa: E402

matplotlib.use("Agg")

from bench.common import device_name, write_json  # noqa: E402
from bench.lesson_cells import bandwidth, device, matmul_sweep  # noqa: E402
from bench.recorded import measured_now  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    props = device.measure()
    print(props, flush=True)
    write_json(args.out, "gpu_props", props)
    write_json(args.out, "gpu_bandwidth", dict(bandwidth.measure(), device=device_name()))
    print("[gpu_sweep] properties and bandwidth saved; now the torch.matmul sweep", flush=True)
    sweep = dict(device=device_name(), tf32=False, timing="CUDA events, median",
                 results=matmul_sweep.measure(args.quick))
    path = write_json(args.out, "gpu_matmul_sweep", sweep)
    try:
        sweep["kernels"] = matmul_sweep.kernel_choices()
        write_json(args.out, "gpu_matmul_sweep", sweep)
    except Exception:  # noqa: BLE001 -- the sweep itself is already saved
        traceback.print_exc()
    page = matmul_sweep.sheet([measured_now(lambda: sweep)])
    page.savefig(path[: -len(".json")] + ".png", dpi=90)


if __name__ == "__main__":
    main()
