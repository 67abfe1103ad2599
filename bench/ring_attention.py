"""Ring attention across P processes with torch.distributed (NCCL on GPUs, gloo on CPUs), three layouts.

Each of P ranks holds N/P query rows and one K/V block; the K/V blocks travel around the ring in P steps
(``dist.batch_isend_irecv``: the next block is in flight while this one is computed), and each rank merges
every block's (o, lse) into its running result with the online softmax (``course/kernels/ring.py``). The
block kernel is the course's own fp32 FlashAttention forward, version 7 (``attention_v7.py``, with its
logsumexp output, a diagonal offset of 0 or -1, and K/V blocks of another length than Q), the same kernel on
1, 2 and 4 GPUs; ``--kernel triton`` runs the Triton flash kernel instead, ``torch`` plain PyTorch (the CPU's
default), ``gpusim`` version 7 with small tiles under the course's simulator (a CPU check of the GPU path).

    torchrun --nproc_per_node=P bench/ring_attention.py --backend nccl --out DIR        # P = 1, 2, 4 GPUs
    python bench/ring_attention.py --backend gloo --world 4 --n 256 --out DIR           # CPU: spawns 4

Layouts (causal): contiguous blocks, stripes (an ordinary causal kernel with diagonal offset 0 or -1), and
zig-zag (two chunks per device, one early and one late); and contiguous full attention. For each sequence
length and layout it records:

* ``seconds``: the median over repeats of a whole ring pass, as long as its *slowest* rank took (every rank
  starts after a barrier; the per-rank pass times are reduced with MAX);
* per rank, the timeline of the median pass: for each step its source, the kernel calls of its plan, when it
  started and ended (seconds after the pass began), its compute (the kernel calls and the merge) and its
  wait for the next block; on GPUs these are CUDA events on the compute stream, read after the pass, so
  that nothing synchronises the ring while it runs; the (query, key) pairs per step and rank are computed
  in closed form (``ring.pairs``), outside the timing;
* ``step_seconds``: each step as long as its slowest rank made it (the latest end minus the latest end of
  the step before);
* the peak memory of each device during the passes, and the memory its inputs hold;
* the relative error of the gathered output against float64 attention (sampled rows at large N).

It also times the K/V transfers alone (a ring pass with no compute: the link's bandwidth at each block
size, for the overlap condition) and, when P = 1 on a GPU, one GPU doing the whole attention: PyTorch SDPA
(fp32, causal and full) and the block kernel called once. Writes ring_attention_p<P>_<device>.json and .txt
(bench/common.py's provenance: device, date, command) into --out, after every sequence length.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import provenance, write_json  # noqa: E402
from course.kernels import ring  # noqa: E402

# NVLink multicast stays off (the device machines' rule); harmless for gloo.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
SAMPLE_ROWS = 256  # query rows checked against float64 at large N
GPU_LENGTHS = [2048, 4096, 8192, 16384, 32768, 65536, 131072]  # multiples of 2 * 4 * 256: no ragged kernel
GPUSIM_TILES = dict(D=16, BQ=32, BKV=16, TX=4, TY=8, UNROLL=2)  # version 7 small enough for the simulator


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("gloo", "nccl"),
                    default="nccl" if torch.cuda.is_available() else "gloo")
    ap.add_argument("--world", type=int, default=2, help="processes to spawn (ignored under torchrun)")
    ap.add_argument("--n", type=int, nargs="+", default=None, help="sequence lengths")
    ap.add_argument("--heads", type=int, default=None)
    ap.add_argument("--dim", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--kernel", choices=("numba", "triton", "torch", "gpusim"), default=None,
                    help="block kernel: the course's Numba flash v7 (GPU default), Triton, PyTorch (CPU "
                         "default), or v7 under gpusim (CPU)")
    ap.add_argument("--layouts", default=",".join(ring.LAYOUTS))
    ap.add_argument("--baselines", choices=("auto", "yes", "no"), default="auto",
                    help="one GPU doing the whole attention (SDPA, the block kernel once): auto = when P = 1")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args(argv)
    gpu = args.backend == "nccl"
    args.n = args.n or (GPU_LENGTHS if gpu else [256])
    args.heads = args.heads or (4 if gpu else 2)
    args.kernel = args.kernel or ("numba" if gpu else "torch")
    args.dim = args.dim or (GPUSIM_TILES["D"] if args.kernel == "gpusim" else 64)
    args.repeats = args.repeats or (5 if gpu else 2)
    args.layouts = [x for x in args.layouts.split(",") if x]
    if args.kernel == "gpusim" and args.dim != GPUSIM_TILES["D"]:
        ap.error(f"--kernel gpusim runs version 7 with head dimension {GPUSIM_TILES['D']}")
    return args


# ----------------------------------------------------------------------------------------- block kernels


def make_kernel(kind: str, dim: int):
    """call(q, k, v, mode) -> (o, lse) for one call of a ring plan (mode in ring.MODES)."""
    if kind == "torch":
        return ring.local_attention
    if kind == "triton":
        from course.kernels import triton_kernels as tk

        def triton_call(q, k, v, mode):
            o, lse = torch.empty_like(q), torch.empty(q.shape[:2], device=q.device)
            tk.flash_attention(q, k, v, o, lse, causal=mode != "full", offset=-1 if mode == "causal-1" else 0)
            return o, lse
        return triton_call
    from course.kernels.attention_v7 import make_flash_v7

    tiles = GPUSIM_TILES if kind == "gpusim" else dict(D=dim, BQ=256, BKV=64, TX=8, TY=32, UNROLL=4)
    launches = {}  # one compiled kernel per mode, made at its first use

    def launch_for(mode):
        if mode not in launches:
            offset = -1 if mode == "causal-1" else 0
            launches[mode] = make_flash_v7(**tiles, CAUSAL=mode != "full", OFFSET=offset)
        return launches[mode]

    if kind == "gpusim":
        import gpusim

        def gpusim_call(q, k, v, mode):
            o = torch.empty_like(q)
            lse = torch.empty(q.shape[:2])
            launch_for(mode)(*(t.contiguous().numpy() for t in (q, k, v)), o.numpy(), lse.numpy(),
                             wrap=gpusim.jit)
            return o, lse
        return gpusim_call
    from numba import cuda

    def numba_call(q, k, v, mode):
        q, k, v = (t.contiguous() for t in (q, k, v))  # a zig-zag half block is a strided slice
        o, lse = torch.empty_like(q), torch.empty(q.shape[:2], device=q.device)
        launch_for(mode)(*(cuda.as_cuda_array(t) for t in (q, k, v, o, lse)))
        return o, lse
    return numba_call


# -------------------------------------------------------------------------------------------- the ring


class Clock:
    """Time markers: CUDA events on the compute stream (GPU), read once the pass is over, so that the ring
    runs as it would unmeasured; host seconds on the CPU, where gloo's waits block the host."""

    def __init__(self, device):
        self.gpu = device.type == "cuda"

    def mark(self):
        if self.gpu:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def between(self, begin, end) -> float:
        """Seconds from one marker to a later one (GPU: after `drain`)."""
        return begin.elapsed_time(end) / 1e3 if self.gpu else end - begin

    def drain(self):
        if self.gpu:
            torch.cuda.synchronize()


def ring_pass(q, own, buffers, layout, causal, kernel, clock, compute=True):
    """One ring pass of this rank: returns (o, lse, timeline). `own` holds this rank's K and V stacked (one
    message per step) and is only ever sent; the blocks that arrive alternate between the two `buffers`, so
    that a block is received while the one before it is computed and passed on. The timeline marks, per
    step, when its compute began and ended and when the next block was there (on a GPU: events on the
    compute stream, which NCCL's receive makes wait), relative to the pass's start."""
    rank, world = dist.get_rank(), dist.get_world_size()
    rows = q.shape[1]
    o = torch.zeros_like(q)
    lse = torch.full(q.shape[:2], float("-inf"), device=q.device)
    origin, marks, kv, empty = clock.mark(), [], own, True
    for step in range(world):
        src = ring.source(rank, step, world)
        requests, incoming = [], buffers[(step + 1) % 2]
        if step < world - 1:  # pass this block on, and receive the next, before computing with this one
            requests = dist.batch_isend_irecv([dist.P2POp(dist.isend, kv, (rank + 1) % world),
                                               dist.P2POp(dist.irecv, incoming, (rank - 1) % world)])
        begin = clock.mark()
        calls = ring.plan(rows, world, layout, causal, rank, src) if compute else []
        for qs, ks, mode in calls:
            o_part, lse_part = kernel(q[:, qs], kv[0][:, ks], kv[1][:, ks], mode)
            if empty and qs == slice(0, rows):  # nothing to merge with yet
                o, lse = o_part, lse_part
            else:
                o[:, qs], lse[:, qs] = ring.merge(o[:, qs], lse[:, qs], o_part, lse_part)
            empty = False
        computed = clock.mark()
        for request in requests:
            request.wait()  # NCCL: the compute stream waits for the block; gloo: the host does
        marks.append((step, src, [mode for _, _, mode in calls], begin, computed, clock.mark()))
        kv = incoming
    clock.drain()
    timeline = [{"step": step, "src": src, "calls": calls, "start_s": clock.between(origin, begin),
                 "end_s": clock.between(origin, ended), "compute_s": clock.between(begin, computed),
                 "wait_s": clock.between(computed, ended)}
                for step, src, calls, begin, computed, ended in marks]
    return o, lse, timeline


def full_inputs(n, heads, dim, seed):
    """The same q, k, v on every rank (from one seed), float32 on the CPU; q is loud so that the max
    matters."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    q, k, v = (torch.randn(heads, n, dim, generator=generator) for _ in range(3))
    return q * 4, k, v


def check_against_float64(q, k, v, o, causal, device):
    """Relative Frobenius error of o on a sample of query rows (all rows when N is small)."""
    n = q.shape[1]
    generator = torch.Generator(device="cpu").manual_seed(n)
    rows = torch.arange(n) if n <= SAMPLE_ROWS else \
        torch.randperm(n, generator=generator)[:SAMPLE_ROWS].sort().values
    q, k, v = (t.to(device).double() for t in (q[:, rows], k, v))
    rows = rows.to(device)
    scores = torch.matmul(q, k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    if causal:
        scores = scores.masked_fill(torch.arange(n, device=device)[None, None, :] > rows[None, :, None],
                                    float("-inf"))
    ref = torch.matmul(torch.softmax(scores, dim=-1), v)
    got = o[:, rows.cpu()].to(device).double()
    return (torch.linalg.norm(got - ref) / torch.linalg.norm(ref)).item()


def slowest(seconds: float, device) -> float:
    """The largest of every rank's `seconds`."""
    value = torch.tensor([seconds], dtype=torch.float64, device=device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return value.item()


def run_layout(n, layout, causal, args, kernel, device, inputs):
    rank, world = dist.get_rank(), dist.get_world_size()
    q, k, v = inputs
    mine = ring.positions(n, world, layout)[rank]
    q_local = q[:, mine].to(device).contiguous()
    kv = torch.stack([k[:, mine], v[:, mine]]).to(device)
    buffers = (torch.empty_like(kv), torch.empty_like(kv))
    clock = Clock(device)
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        held = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    passes = []
    for repeat in range(args.repeats + 1):  # the first pass compiles and connects: not counted
        dist.barrier()
        clock.drain()
        o, lse, timeline = ring_pass(q_local, kv, buffers, layout, causal, kernel, clock)
        if repeat:
            passes.append((slowest(timeline[-1]["end_s"], device), timeline))
    peak = torch.cuda.max_memory_allocated() if device.type == "cuda" else None
    times = [seconds for seconds, _ in passes]
    median = sorted(range(len(times)), key=times.__getitem__)[len(times) // 2]
    gathered = [torch.empty_like(o) for _ in range(world)]
    dist.all_gather(gathered, o)
    mine_facts = {"rank": rank, "timeline": passes[median][1], "peak_bytes": peak,
                  "held_bytes": held if device.type == "cuda" else None}
    every = [None] * world
    dist.all_gather_object(every, mine_facts)
    if rank != 0:
        return None
    full_o = torch.empty(q.shape)
    for r, part in enumerate(gathered):
        full_o[:, ring.positions(n, world, layout)[r]] = part.cpu()
    ends = [[rank_facts["timeline"][s]["end_s"] for rank_facts in every] for s in range(world)]
    latest = [max(step) for step in ends]
    return {"n": n, "layout": layout, "causal": causal, "world": world, "heads": args.heads, "dim": args.dim,
            "kernel": args.kernel, "seconds": times[median], "all_seconds": times,
            "step_seconds": [b - a for a, b in zip([0.0] + latest[:-1], latest, strict=True)],
            "pairs": ring.work_per_step(n, world, layout, causal),
            "rel_err": check_against_float64(q, k, v, full_o, causal, device), "ranks": every}


def transfer_only(n, args, device, inputs):
    """Seconds of one ring step's K/V transfer with nothing else running (median of repeats; the slowest
    rank's), and the bytes it moves: the link as the ring uses it."""
    world = dist.get_world_size()
    q, k, v = inputs
    mine = ring.positions(n, world, "contiguous")[dist.get_rank()]
    kv = torch.stack([k[:, mine], v[:, mine]]).to(device)
    buffers, clock, steps = (torch.empty_like(kv), torch.empty_like(kv)), Clock(device), []
    for repeat in range(args.repeats + 1):
        dist.barrier()
        clock.drain()
        _, _, timeline = ring_pass(q[:, mine[:1]].to(device), kv, buffers, "contiguous", False, None, clock,
                                   compute=False)
        if repeat:
            steps.append(slowest(timeline[-1]["end_s"], device) / (world - 1))
    seconds = sorted(steps)[len(steps) // 2]
    size = kv.numel() * kv.element_size()
    return {"n": n, "world": world, "bytes_per_step": size, "seconds_per_step": seconds,
            "GBps": size / seconds / 1e9}


# -------------------------------------------------------------------------------- one GPU, whole sequence


def single_gpu_baselines(n, args, device, kernel, inputs):
    """One GPU doing the whole attention (causal and full): SDPA in fp32, and the block kernel called once;
    time (median, CUDA events), extra memory, error."""
    import torch.nn.functional as F

    from bench.common import time_ms

    q, k, v = (t.to(device) for t in inputs)
    rows = []
    for causal in (True, False):
        def sdpa(causal=causal):
            return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]

        def course_kernel(causal=causal):
            return kernel(q, k, v, "causal" if causal else "full")[0]

        for name, fn in (("one GPU, PyTorch SDPA fp32", sdpa), (f"one GPU, block kernel ({args.kernel})",
                                                                course_kernel)):
            row = {"n": n, "causal": causal, "name": name, "heads": args.heads, "dim": args.dim}
            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                base = torch.cuda.memory_allocated()
                torch.cuda.reset_peak_memory_stats()
                out = fn()
                torch.cuda.synchronize()
                row["extra_bytes"] = torch.cuda.max_memory_allocated() - base
                row["rel_err"] = check_against_float64(*inputs, out.cpu(), causal, device)
                del out
                row["seconds"] = time_ms(fn, budget_s=1.0, max_reps=args.repeats, min_reps=3)[0] / 1e3
            except torch.OutOfMemoryError as error:
                row["error"] = f"out of memory: {str(error).splitlines()[0][:160]}"
            torch.cuda.empty_cache()
            rows.append(row)
            print(f"  {name:34s} N={n:6d} causal={causal!s:5s} "
                  + (f"{row['seconds'] * 1e3:9.2f} ms  extra {row['extra_bytes'] / 2**30:6.2f} GiB"
                     if "seconds" in row else row["error"]), flush=True)
    return rows


# ---------------------------------------------------------------------------------------------- workers


def worker(rank: int, world: int, args, port: int | None = None):
    if port is not None:  # spawned by this script, not torchrun
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                          WORLD_SIZE=str(world))
    gpu = args.backend == "nccl"
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()) \
        if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = False
    else:
        torch.set_num_threads(1)  # P processes share the machine's cores
    dist.init_process_group(args.backend, rank=rank, world_size=world, device_id=device if gpu else None)
    if gpu and args.kernel == "numba":
        from numba import cuda

        cuda.select_device(device.index)  # Numba's kernels on this rank's GPU (PyTorch's primary context)
    kernel = make_kernel(args.kernel, args.dim)
    baselines = gpu and (args.baselines == "yes" or (args.baselines == "auto" and world == 1))
    results, links, singles = [], [], []
    meta = {"backend": args.backend, "world": world, "kernel": args.kernel, "torch": torch.__version__,
            "dtype": "float32", "tf32": False, "repeats": args.repeats,
            "timing": "median over repeats of a ring pass as long as its slowest rank (each rank's pass "
                      "timed from after a barrier); per-rank timelines from CUDA events on the compute "
                      "stream (GPU) or host seconds (CPU), read after the pass"}
    try:
        for n in args.n:
            inputs = full_inputs(n, args.heads, args.dim, seed=n)
            for layout, causal in [(layout, True) for layout in args.layouts] + [("contiguous", False)]:
                if n % ring.granule(world, layout):
                    continue
                row = run_layout(n, layout, causal, args, kernel, device, inputs)
                if row is not None:
                    results.append(row)
                    print(f"P={world} N={n:6d} {layout:10s} {'causal' if causal else 'full':6s} "
                          f"{row['seconds'] * 1e3:9.2f} ms  rel err {row['rel_err']:.1e}", flush=True)
            if world > 1:
                link = transfer_only(n, args, device, inputs)
                if rank == 0:
                    links.append(link)
            if rank == 0 and baselines:
                singles += single_gpu_baselines(n, args, device, kernel, inputs)
            if rank == 0:  # what is measured so far survives a time limit
                write_results(results, links, singles, meta, args, device)
            dist.barrier()
    finally:
        dist.destroy_process_group()


def write_results(results, links, singles, meta, args, device):
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    stem = f"ring_attention_p{meta['world']}"
    path = write_json(args.out, stem, {"meta": {**meta, "device": name}, "results": results, "links": links,
                                       "single_device": singles, "provenance": provenance(name)})
    lines = [f"ring attention on {meta['world']} x {name} ({args.backend}, block kernel: {args.kernel})",
             f"{'N':>7s} {'layout':10s} {'mask':6s} {'ms':>9s} {'rel err':>8s}  slowest step ms | pairs of "
             f"the busiest rank per step"]
    for r in results:
        busiest = [max(step) for step in r["pairs"]]
        lines.append(f"{r['n']:7d} {r['layout']:10s} {'causal' if r['causal'] else 'full':6s} "
                     f"{r['seconds'] * 1e3:9.2f} {r['rel_err']:8.1e}  "
                     + " ".join(f"{s * 1e3:.2f}" for s in r["step_seconds"]) + " | "
                     + " ".join(str(p) for p in busiest))
    for link in links:
        lines.append(f"{link['n']:7d} K/V transfer alone: {link['bytes_per_step'] / 2**20:.1f} MiB per step, "
                     f"{link['seconds_per_step'] * 1e3:.3f} ms, {link['GBps']:.1f} GB/s")
    for b in singles:
        shown = f"{b['seconds'] * 1e3:9.2f}" if "seconds" in b else b["error"]
        lines.append(f"{b['n']:7d} {b['name']:34s} {'causal' if b['causal'] else 'full':6s} {shown}")
    with open(path[: -len(".json")] + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    args = parse_args(argv)
    if args.kernel == "gpusim":  # before Numba's first import: version 7 is generated for the simulator
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    torchrun = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    if torchrun:
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    import torch.multiprocessing as mp

    # fork shares this process's imported torch with the workers (no GPU is touched before the fork)
    method = "fork" if args.backend == "gloo" and sys.platform == "linux" else "spawn"
    mp.start_processes(worker, args=(args.world, args, free_port()), nprocs=args.world, join=True,
                       start_method=method)


if __name__ == "__main__":
    main()
