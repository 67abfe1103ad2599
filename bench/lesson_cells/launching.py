"""Lesson 03 on a GPU: PyTorch tensors through the CUDA array interface, compile time, what one launch costs
with each kind of argument, and whether a launch waits for its kernel (why a timer needs a synchronise)."""

import inspect
import time

import numpy as np
import torch
from numba import cuda, float32


def code_of(*functions):
    """The source of functions and kernels (a kernel's Python function), for a lesson to print."""
    return "\n\n".join(inspect.getsource(getattr(f, "py_func", f)).rstrip() for f in functions)


@cuda.jit
def add_kernel(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


@cuda.jit
def busy_kernel(x, repeats):
    i = cuda.grid(1)
    if i < x.shape[0]:
        value = x[i]
        for _ in range(repeats):
            value = value * float32(0.999) + float32(0.001)  # float32 constants: 0.999 alone is a float64
        x[i] = value


@cuda.jit
def empty_kernel(x):
    pass


def array_interface(double_kernel):
    """Launch `double_kernel` on PyTorch CUDA tensors: it writes into the tensor's own memory."""
    x = torch.arange(10, dtype=torch.float32, device="cuda")
    out = torch.zeros_like(x)
    double_kernel[3, 4](x, out)  # no copies: Numba reads pointer, shape and strides from the tensor
    torch.cuda.synchronize()
    interface = x.__cuda_array_interface__
    return dict(out=out.tolist(), keys=sorted(interface), shape=list(interface["shape"]),
                typestr=interface["typestr"],
                same_memory=cuda.as_cuda_array(out).device_ctypes_pointer.value == out.data_ptr())


def show_array_interface(records):
    for record in records:
        data = record.data
        print(record.header())
        print(f"  out (a torch CUDA tensor) after the launch: {data['out']}")
        print(f"  __cuda_array_interface__ keys: {data['keys']}; shape {data['shape']}, "
              f"typestr {data['typestr']!r} (little-endian 4-byte float)")
        print(f"  Numba's view of `out` has the tensor's own address: {data['same_memory']}")


def compile_time(n=1 << 20):
    """Milliseconds of the first and the second call of a kernel compiled for the first time here."""
    @cuda.jit
    def fresh_add(a, b, out):  # a new dispatcher, so the first call really compiles
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = a[i] + b[i]

    a = torch.rand(n, device="cuda")
    b, out = torch.rand_like(a), torch.empty_like(a)
    calls = {}
    for call in ("first", "second"):
        start = time.perf_counter()
        fresh_add[(n + 255) // 256, 256](a, b, out)
        torch.cuda.synchronize()
        calls[call] = (time.perf_counter() - start) * 1e3
    return dict(ms=calls, correct=bool(torch.allclose(out, a + b)))


def show_compile_time(records):
    for record in records:
        ms = record.data["ms"]
        print(record.header())
        print(f"  first call {ms['first']:8.2f} ms (compiles), second call {ms['second']:6.3f} ms: "
              f"the first is {ms['first'] / ms['second']:,.0f} times slower")


def launch_costs(launches=200):
    """Microseconds per launch, launches back to back: Numba's empty kernel given a torch CUDA tensor, a
    Numba device array or a NumPy array (copied there and back), and a tiny torch operation (torch's own
    launch path, for comparison)."""
    small_gpu, small_host = torch.zeros(1, device="cuda"), np.zeros(1, dtype=np.float32)
    device_array = cuda.to_device(small_host)
    runs = {
        "Numba, torch CUDA tensor": lambda: empty_kernel[1, 1](small_gpu),
        "Numba, Numba device array": lambda: empty_kernel[1, 1](device_array),
        "Numba, NumPy array (copied)": lambda: empty_kernel[1, 1](small_host),
        "torch, x.add_(1) on one element": lambda: small_gpu.add_(1),
    }
    costs = {}
    for label, run in runs.items():
        run()  # compiles Numba's kernel for this argument type
        times = []
        for _ in range(3):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(launches):
                run()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        costs[label] = float(np.median(times)) / launches * 1e6
    return dict(launches=launches, us_per_launch=costs)


def launch_returns(repeats=20000):
    """Milliseconds until a launch of busy_kernel returns, and until the kernel has finished, with a torch
    CUDA tensor and with a NumPy array: does the launch wait for the kernel?"""
    host = np.random.default_rng(0).random(1 << 22, dtype=np.float32)
    tensor = torch.from_numpy(host).cuda()
    launch = ((host.size + 255) // 256, 256)
    rows = {}
    for label, argument in (("torch CUDA tensor", tensor), ("NumPy array", host)):
        busy_kernel[launch](argument, 10)  # compile first
        torch.cuda.synchronize()
        start = time.perf_counter()
        busy_kernel[launch](argument, repeats)
        returned = time.perf_counter() - start
        torch.cuda.synchronize()
        finished = time.perf_counter() - start
        rows[label] = dict(returned_ms=returned * 1e3, finished_ms=finished * 1e3)
    return dict(repeats=repeats, elements=host.size, rows=rows)


def launch(launches=200, repeats=20000):
    """Both measurements of the launch, as one record."""
    return dict(costs=launch_costs(launches), returns=launch_returns(repeats))


def show_launch_returns(records):
    for record in records:
        print(record.header())
        for label, row in record.data["returns"]["rows"].items():
            print(f"  busy_kernel on a {label:17}: the launch returned after {row['returned_ms']:8.3f} ms, "
                  f"the kernel had finished after {row['finished_ms']:7.2f} ms")


def show_launch_costs(records):
    for record in records:
        print(record.header())
        for label, us in record.data["costs"]["us_per_launch"].items():
            print(f"  {label:34}: {us:7.1f} µs per launch")
