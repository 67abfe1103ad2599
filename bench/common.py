"""What every GPU benchmark script shares: the device's tag, CUDA-event timing, compiled-kernel resources,
and writing a result file that says where, when and how it was measured (its provenance)."""

import json
import os
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import torch

KNOWN_TAGS = ("H200", "H100", "A100", "L40S", "L4", "T4")


def tag_of(device_name):
    """The short name a result file carries: H100, H200, ... or the device name without punctuation."""
    for tag in KNOWN_TAGS:
        if tag in device_name:
            return tag
    return re.sub(r"[^A-Za-z0-9]", "", device_name.replace("NVIDIA", ""))


def device_name():
    return torch.cuda.get_device_name()


def device_tag():
    return tag_of(device_name())


def time_ms(fn, budget_s=1.5, max_reps=30, min_reps=3):
    """Median milliseconds of fn() over repeats, each bracketed by CUDA events (fn already warmed up);
    also returns every time, sorted."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    t_end = time.perf_counter() + budget_s
    while len(times) < max_reps and (len(times) < min_reps or time.perf_counter() < t_end):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2], times


def kernel_resources(kernel):
    """Registers and local memory per thread, shared memory per block, as the compiler reports them."""
    out = {}
    for key, getter in (
        ("regs_per_thread", "get_regs_per_thread"),
        ("local_bytes_per_thread", "get_local_mem_per_thread"),
        ("shared_bytes_per_block", "get_shared_mem_per_block"),
    ):
        try:
            value = getattr(kernel, getter)()
            out[key] = list(value.values())[0] if isinstance(value, dict) else value
        except Exception as error:  # noqa: BLE001 -- informational only
            out[key] = f"n/a ({type(error).__name__})"
    return out


def software_versions():
    versions = {}
    for module in ("torch", "numba", "numba_cuda", "numpy"):
        try:
            versions[module] = __import__(module).__version__
        except ImportError:
            continue
    return versions


def provenance(device=None):
    """Device, UTC date and the command line of this measurement (the script and its arguments)."""
    device = device or device_name()
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(Path(__file__).resolve().parents[1])
    except ValueError:
        pass
    command = " ".join(["python3", str(script), *sys.argv[1:]])
    parent = os.environ.get("BENCH_PARENT_COMMAND")
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return dict(device=device, tag=tag_of(device), date=date,
                command=f"{command} (from {parent})" if parent else command, versions=software_versions())


def write_json(out_dir, name, data):
    """Write data, with its provenance, to OUT_DIR/NAME_<tag>.json and return the path."""
    data = dict(data)
    if "provenance" not in data:  # (setdefault would ask for the GPU's name even when it is given)
        data["provenance"] = provenance()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}_{data['provenance']['tag']}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)
    return path
