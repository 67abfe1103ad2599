#!/usr/bin/env bash
# The GPU figures of Parts 8 and 9 (issue 25) in two device calls, each step under a time limit, every script
# saving what it has measured as it goes:
#   bash bench/gpu_parts89.sh single OUTDIR   # one GPU, about 5 minutes:
#       Part 8's prefetch control and flash v5 -> v6 steps (bench/gpu_parts89.py), the three-language table
#       with its bf16 tensor-core row and the unsigned-index Numba softmax (bench/gpu_languages.py), and, on
#       an H100 with no such file in bench/results yet, the double-buffering rows of lesson 08
#   bash bench/gpu_parts89.sh ring OUTDIR     # 2 or 4 GPUs of one host, about 6 minutes:
#       bench/ring_attention.py on 1, 2 and 4 GPUs (as many as there are), NCCL, NVLink multicast off
#   bash bench/gpu_parts89.sh rerun OUTDIR    # 2 or 4 GPUs of one host, at most 7 minutes: the ring as above,
#       then Part 8's prefetch control, then (while time is left) the three-language table again
# OUTDIR receives the result files (named with the device: copy them into bench/results/) and a log per step,
# and, last, all of it packed into OUTDIR/parts89_<mode>.tgz (the device returns a few files per call).
set -u
MODE=${1:?single, ring or rerun}
OUTDIR=$(realpath -m "${2:-bench/results}")
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 BENCH_PARENT_COMMAND="bash bench/gpu_parts89.sh $MODE"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
mkdir -p "$OUTDIR"
START=$SECONDS
case "$MODE" in ring) DEFAULT=400 ;; rerun) DEFAULT=420 ;; *) DEFAULT=320 ;; esac
BUDGET=${BUDGET:-$DEFAULT}

step() {  # step NAME SECONDS COMMAND...: at most SECONDS, never past the budget; output to OUTDIR/NAME.log
  local name=$1 limit=$2
  shift 2
  local left=$((BUDGET - (SECONDS - START)))
  ((left < limit)) && limit=$left
  if ((limit <= 10)); then
    echo "[parts89] $name: skipped, the time budget is spent"
    return
  fi
  echo "[parts89] $name: starting at $((SECONDS - START)) s, at most $limit s"
  timeout --kill-after=10 "$limit" "$@" > "$OUTDIR/$name.log" 2>&1
  local status=$?
  tail -n 25 "$OUTDIR/$name.log"
  echo "[parts89] $name: exit status $status at $((SECONDS - START)) s"
}

ring_all() {  # the ring on 1, 2 and 4 GPUs, as many as this host has
  local gpus p
  gpus=$(nvidia-smi -L | wc -l)
  for p in 1 2 4; do
    if ((p <= gpus)); then
      step "ring_p$p" 150 python3 -m torch.distributed.run --standalone --nproc_per_node="$p" \
        bench/ring_attention.py --backend nccl --out "$OUTDIR"
    fi
  done
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
case "$MODE" in
  single)
    # The CUDA C++ extensions build on the CPU (nvcc, about a minute) while the GPU measures Part 8;
    # gpu_languages.py then finds them built (load_inline's cache) or waits for the build to finish.
    python3 -c "from course.kernels import cuda_cpp; cuda_cpp.load(); cuda_cpp.load_tensorcore()" \
      > "$OUTDIR/cuda_cpp_build.log" 2>&1 &
    step prefetch_control 60 python3 bench/gpu_parts89.py --parts prefetch --out "$OUTDIR"
    step flash_steps 110 python3 bench/gpu_parts89.py --parts flash --out "$OUTDIR"
    step languages 170 python3 bench/gpu_languages.py --out "$OUTDIR"
    TAG=$(python3 -c "import torch; from bench.common import tag_of; print(tag_of(torch.cuda.get_device_name()))")
    if [ "$TAG" = H100 ] && [ ! -e "bench/results/gpu_double_buffer_$TAG.json" ]; then
      step double_buffer 90 python3 bench/gpu_matmul.py --out "$OUTDIR" --only 4,7,8,10,11,12 \
        --name gpu_double_buffer
    fi
    wait
    ;;
  ring)
    ring_all
    ;;
  rerun)
    python3 -c "from course.kernels import cuda_cpp; cuda_cpp.load(); cuda_cpp.load_tensorcore()" \
      > "$OUTDIR/cuda_cpp_build.log" 2>&1 &
    ring_all
    step prefetch_control 60 python3 bench/gpu_parts89.py --parts prefetch --out "$OUTDIR"
    step languages 170 python3 bench/gpu_languages.py --out "$OUTDIR"
    wait
    ;;
  *)
    echo "mode must be single, ring or rerun, not $MODE" >&2
    exit 2
    ;;
esac
echo "[parts89] done in $((SECONDS - START)) s; files:"
ls -l "$OUTDIR"
PACK=$(mktemp -d)
tar -czf "$PACK/parts89_$MODE.tgz" -C "$OUTDIR" . && mv "$PACK/parts89_$MODE.tgz" "$OUTDIR/" && rmdir "$PACK"
echo "[parts89] packed: $OUTDIR/parts89_$MODE.tgz ($(du -h "$OUTDIR/parts89_$MODE.tgz" | cut -f1))"
