"""Ring attention and striped attention across processes with torch.distributed: gloo on CPUs, NCCL on GPUs.

Each of P ranks holds N/P query rows and one K/V block; the K/V blocks travel around the ring in P steps
(``dist.batch_isend_irecv``: the next block is already in flight while this one is computed), and each rank
merges every block's (o, lse) into its running result with the online softmax (``kernels/ring.py``).

    python bench/ring_attention.py --backend gloo --world 4 --n 256            # CPU: spawns 4 processes
    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \\
        torchrun --nproc_per_node=2 bench/ring_attention.py --backend nccl --out DIR   # 2 GPUs

For each layout (contiguous, striped) and mask (causal, full) it records, per rank and step: the (query, key)
pairs computed, the seconds of compute and the seconds spent waiting for the next block; the total time, the
peak memory per device (GPU), and the relative error of the gathered output against float64 attention (on a
sample of query rows at large N). On GPUs rank 0 also times one GPU doing the whole attention: unfused PyTorch
(while it fits), SDPA, and the Triton flash kernel. Writes ring_attention_<device>.json and .txt into --out.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from course.kernels import ring  # noqa: E402

# NVLink multicast stays off (the device machines' rule); harmless for gloo.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
SAMPLE_ROWS = 512  # query rows checked against float64 at large N


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("gloo", "nccl"),
                    default="nccl" if torch.cuda.is_available() else "gloo")
    ap.add_argument("--world", type=int, default=2, help="processes to spawn (ignored under torchrun)")
    ap.add_argument("--n", type=int, nargs="+", default=None, help="sequence lengths (multiples of world)")
    ap.add_argument("--heads", type=int, default=None)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--kernel", choices=("torch", "triton"), default=None,
                    help="per-block attention: PyTorch ops, or the Triton flash kernel (default on GPUs)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--tag", default=None, help="file name tag (default: the device)")
    args = ap.parse_args(argv)
    gpu = args.backend == "nccl"
    args.n = args.n or ([8192, 32768, 65536, 131072] if gpu else [256])
    args.heads = args.heads or (4 if gpu else 2)
    args.repeats = args.repeats or (5 if gpu else 2)
    args.kernel = args.kernel or ("triton" if gpu else "torch")
    return args


# ------------------------------------------------------------------------------------------- one block


def make_block_fn(kind: str):
    """block(q, k, v, q_pos, k_pos, causal, rank, src, layout) -> (o, lse), or None when nothing is seen."""
    if kind == "torch":
        def block(q, k, v, q_pos, k_pos, causal, rank, src, layout):
            if causal and layout == "contiguous" and src > rank:
                return None  # every key lies after every query: this rank idles this step
            return ring.block_attention(q, k, v, q_pos, k_pos, causal)
        return block
    from course.kernels import triton_kernels as tk

    def block(q, k, v, q_pos, k_pos, causal, rank, src, layout):
        offset = 0
        if causal and layout == "contiguous":
            if src > rank:
                return None
            causal = src == rank  # blocks before the diagonal block are seen whole
        elif causal:  # stripes: key b of device src is seen by query a of this device when b <= a (+ -1)
            offset = 0 if src <= rank else -1
        o = torch.empty_like(q)
        lse = torch.empty(q.shape[:2], device=q.device, dtype=torch.float32)
        tk.flash_attention(q, k, v, o, lse, causal=causal, offset=offset)
        return o, lse
    return block


# -------------------------------------------------------------------------------------------- the ring


def ring_pass(q, k, v, q_pos, all_pos, causal, layout, block, device):
    """One ring attention: returns (o, lse, steps), steps = [{"src", "pairs", "compute_s", "wait_s"}].
    Every step ends with the device synchronised, so that its compute (CUDA events on GPUs) and its wait for
    the next block can be told apart."""
    rank, world = dist.get_rank(), dist.get_world_size()
    send_to, recv_from = (rank + 1) % world, (rank - 1) % world
    kv = torch.stack([k, v])  # one message per step
    o = torch.zeros_like(q)
    lse = torch.full(q.shape[:2], float("-inf"), device=device)
    steps = []
    for step in range(world):
        src = ring.source(rank, step, world)
        requests, incoming = [], None
        if step < world - 1:  # start passing this block on before computing with it
            incoming = torch.empty_like(kv)
            requests = dist.batch_isend_irecv([dist.P2POp(dist.isend, kv, send_to),
                                               dist.P2POp(dist.irecv, incoming, recv_from)])
        start = _now(device)
        events = [torch.cuda.Event(enable_timing=True) for _ in range(2)] if device.type == "cuda" else None
        if events:
            events[0].record()
        result = block(q, kv[0], kv[1], q_pos, all_pos[src], causal, rank, src, layout)
        if result is not None:
            o, lse = ring.merge(o, lse, *result)
        if events:
            events[1].record()
        computed = time.perf_counter()
        for request in requests:
            request.wait()
        finished = _now(device)
        compute_s = events[0].elapsed_time(events[1]) / 1e3 if events else computed - start
        steps.append({"src": src, "pairs": ring.work(q_pos, all_pos[src], causal) * q.shape[0],
                      "compute_s": compute_s, "wait_s": max(0.0, finished - start - compute_s)})
        if incoming is not None:
            kv = incoming
    return o, lse, steps


def _now(device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


def full_inputs(n, heads, dim, device, seed):
    """The same q, k, v on every rank (from one seed), float32; q is loud so that the max matters."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    q, k, v = (torch.randn(heads, n, dim, generator=generator) for _ in range(3))
    return (q * 4).to(device), k.to(device), v.to(device)


def check_against_float64(q, k, v, o, causal, device):
    """Relative Frobenius error of o on a sample of query rows (all rows when N is small)."""
    n = q.shape[1]
    rows = torch.arange(n) if n <= SAMPLE_ROWS else torch.randperm(n)[:SAMPLE_ROWS].sort().values
    rows = rows.to(device)
    scores = torch.matmul(q[:, rows].double(), k.double().transpose(-1, -2)) / q.shape[-1] ** 0.5
    if causal:
        scores = scores.masked_fill(torch.arange(n, device=device)[None, None, :] > rows[None, :, None],
                                    float("-inf"))
    ref = torch.matmul(torch.softmax(scores, dim=-1), v.double())
    return (torch.linalg.norm(o[:, rows].double() - ref) / torch.linalg.norm(ref)).item()


def run_layout(n, layout, causal, args, block, device):
    rank, world = dist.get_rank(), dist.get_world_size()
    q, k, v = full_inputs(n, args.heads, args.dim, device, seed=n)
    all_pos = [p.to(device) for p in ring.positions(n, world, layout)]
    mine = all_pos[rank]
    q_local, k_local, v_local = (t[:, mine].contiguous() for t in (q, k, v))
    if device.type == "cuda":
        del q, k, v  # rank 0 regenerates them for the check; the ring itself holds only its blocks
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    times, steps = [], None
    for _ in range(args.repeats):
        dist.barrier()
        start = _now(device)
        o, lse, steps = ring_pass(q_local, k_local, v_local, mine, all_pos, causal, layout, block, device)
        times.append(_now(device) - start)
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None
    gathered = [torch.empty_like(o) for _ in range(world)] if rank == 0 else None
    dist.gather(o, gathered, dst=0)
    every = [None] * world
    dist.all_gather_object(every, {"rank": rank, "steps": steps, "peak_bytes": peak})
    if rank != 0:
        return None
    full_o = torch.empty(args.heads, n, args.dim, device=device)
    for r, part in enumerate(gathered):
        full_o[:, all_pos[r]] = part
    q, k, v = full_inputs(n, args.heads, args.dim, device, seed=n)
    error = check_against_float64(q, k, v, full_o, causal, device)
    return {"n": n, "layout": layout, "causal": causal, "world": world, "heads": args.heads, "dim": args.dim,
            "seconds": sorted(times)[len(times) // 2], "all_seconds": times, "rel_err": error,
            "ranks": every}


# -------------------------------------------------------------------------------- one GPU, whole sequence


def single_gpu_baselines(n, args, device):
    """Rank 0 only: one GPU doing the whole attention (causal and full), time and peak extra memory."""
    import math

    import torch.nn.functional as F

    from course.kernels import triton_kernels as tk

    rows = []
    q, k, v = full_inputs(n, args.heads, args.dim, device, seed=n)
    for causal in (True, False):
        def unfused(causal=causal):
            s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(args.dim))
            if causal:
                s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=device).triu_(1), float("-inf"))
            return torch.matmul(torch.softmax(s, dim=-1), v)

        def sdpa(causal=causal):
            return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]

        def triton_flash(causal=causal):
            o = torch.empty_like(q)
            lse = torch.empty(q.shape[:2], device=device)
            tk.flash_attention(q, k, v, o, lse, causal=causal)
            return o

        for name, fn in (("one GPU, unfused PyTorch", unfused), ("one GPU, SDPA", sdpa),
                         ("one GPU, Triton flash kernel", triton_flash)):
            row = {"n": n, "causal": causal, "name": name, "heads": args.heads, "dim": args.dim}
            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                base = torch.cuda.memory_allocated()
                torch.cuda.reset_peak_memory_stats()
                out = fn()
                torch.cuda.synchronize()
                row["extra_bytes"] = torch.cuda.max_memory_allocated() - base
                row["rel_err"] = check_against_float64(q, k, v, out, causal, device)
                del out
                times = []
                for _ in range(args.repeats):
                    start = _now(device)
                    fn()
                    times.append(_now(device) - start)
                row["seconds"] = sorted(times)[len(times) // 2]
            except torch.OutOfMemoryError as error:
                row["error"] = f"out of memory: {str(error).splitlines()[0][:160]}"
            torch.cuda.empty_cache()
            rows.append(row)
            print(f"  {name:30s} N={n:6d} causal={causal!s:5s} "
                  + (f"{row['seconds'] * 1e3:9.2f} ms  extra {row['extra_bytes'] / 2**30:6.2f} GiB"
                     if "seconds" in row else row["error"]), flush=True)
    return rows


# ---------------------------------------------------------------------------------------------- workers


def worker(rank: int, world: int, args, port: int | None = None):
    if port is not None:  # spawned by this script, not torchrun
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                          WORLD_SIZE=str(world))
    device = torch.device("cuda", rank % torch.cuda.device_count()) if args.backend == "nccl" \
        else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = False
    if args.backend == "gloo":
        torch.set_num_threads(1)  # P processes share the machine's cores
    dist.init_process_group(args.backend, rank=rank, world_size=world,
                            device_id=device if device.type == "cuda" else None)
    block = make_block_fn(args.kernel)
    results, baselines = [], []
    try:
        for n in args.n:
            for layout, causal in (("contiguous", True), ("striped", True), ("contiguous", False)):
                row = run_layout(n, layout, causal, args, block, device)
                if row is not None:
                    results.append(row)
                    print(f"N={n:6d} {layout:10s} causal={causal!s:5s} {row['seconds'] * 1e3:9.2f} ms  "
                          f"rel err {row['rel_err']:.1e}", flush=True)
            if rank == 0 and device.type == "cuda":
                baselines += single_gpu_baselines(n, args, device)
            dist.barrier()
    finally:
        if rank == 0:
            write_results(results, baselines, args, device)
        dist.destroy_process_group()


def write_results(results, baselines, args, device):
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        tag = args.tag or next((t for t in ("H200", "H100", "A100") if t in name), name.replace(" ", "_"))
    else:
        name, tag = "CPU (gloo processes)", args.tag or "cpu"
    meta = {"device": name, "backend": args.backend, "world": dist.get_world_size(), "kernel": args.kernel,
            "torch": torch.__version__, "dtype": "float32", "tf32": False, "repeats": args.repeats,
            "timing": "median wall seconds of a whole ring pass, devices synchronised around it"}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"ring_attention_{tag}.json"), "w") as f:
        json.dump({"meta": meta, "results": results, "single_device": baselines}, f, indent=1)
    lines = [f"ring attention on {meta['world']} x {name} ({args.backend}, per-block kernel: {args.kernel})",
             f"{'N':>7s} {'layout':10s} {'mask':6s} {'ms':>9s} {'rel err':>8s}  pairs per step (rank 0..P-1)"]
    for r in results:
        pairs = " | ".join(" ".join(f"{x['steps'][s]['pairs']:>6d}" for x in r["ranks"])
                           for s in range(r["world"]))
        lines.append(f"{r['n']:7d} {r['layout']:10s} {'causal' if r['causal'] else 'full':6s} "
                     f"{r['seconds'] * 1e3:9.2f} {r['rel_err']:8.1e}  {pairs}")
    for b in baselines:
        shown = f"{b['seconds'] * 1e3:9.2f}" if "seconds" in b else b["error"]
        lines.append(f"{b['n']:7d} {b['name']:30s} {'causal' if b['causal'] else 'full':6s} {shown}")
    with open(os.path.join(args.out, f"ring_attention_{tag}.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    args = parse_args(argv)
    torchrun = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    world = int(os.environ["WORLD_SIZE"]) if torchrun else args.world
    for n in args.n:
        if n % world:
            raise SystemExit(f"--n {n} is not a multiple of the number of processes ({world})")
    if torchrun:
        worker(int(os.environ["RANK"]), world, args)
    else:
        import torch.multiprocessing as mp

        # fork shares this process's imported torch with the workers (no GPU is touched before the fork)
        method = "fork" if args.backend == "gloo" and sys.platform == "linux" else "spawn"
        mp.start_processes(worker, args=(args.world, args, free_port()), nprocs=args.world, join=True,
                           start_method=method)


if __name__ == "__main__":
    main()
