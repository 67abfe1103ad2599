#!/usr/bin/env bash
# Every GPU measurement of the course in one go (one device call), then every lesson run in GPU mode.
#   bash bench/gpu_all.sh OUTDIR [SECONDS]
# OUTDIR receives the result files (JSON, TXT, PNG, named with the device: copy them into bench/results/)
# and OUTDIR/lesson_runs/ (one log per lesson, and the figures each lesson drew). Every step has a time
# limit, and all of them together stay within SECONDS (default 600); each script saves what it has
# measured as it goes, so a step stopped early still leaves its partial results. The lessons step's exit status
# is 1 if a cell failed, 2 if every cell passed but a notebook's process crashed on its way out (its summary
# line says so, and its log holds the crash and a Python stack).
# Extra arguments: MATMUL_ARGS="--explore" ATTN_ARGS="--explore" bash bench/gpu_all.sh OUTDIR
set -u
OUTDIR=$(realpath -m "${1:-bench/results}")
BUDGET=${2:-600}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 BENCH_PARENT_COMMAND="bash bench/gpu_all.sh"
mkdir -p "$OUTDIR"
START=$SECONDS

step() {  # step NAME SECONDS COMMAND...: run COMMAND for at most SECONDS, and never past the budget
  local name=$1 limit=$2
  shift 2
  local left=$((BUDGET - (SECONDS - START)))
  ((left < limit)) && limit=$left
  if ((limit <= 10)); then
    echo "[gpu_all] $name: skipped, the time budget is spent"
    return
  fi
  echo "[gpu_all] $name: starting at $((SECONDS - START)) s, at most $limit s"
  timeout --kill-after=10 "$limit" "$@"
  echo "[gpu_all] $name: exit status $? at $((SECONDS - START)) s"
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv || true
python3 -c "import numpy, numba, numba_cuda, torch; print('numpy', numpy.__version__, 'numba', numba.__version__, \
'numba-cuda', numba_cuda.__version__, 'torch', torch.__version__)"
step "lesson cells (bench/gpu_lessons.py)" 90 python3 bench/gpu_lessons.py --out "$OUTDIR"
step "properties, bandwidth, matmul sweep (bench/gpu_sweep.py)" 90 python3 bench/gpu_sweep.py --out "$OUTDIR"
# shellcheck disable=SC2086
step "matmul versions (bench/gpu_matmul.py)" 60 python3 bench/gpu_matmul.py --out "$OUTDIR" ${MATMUL_ARGS:-}
# shellcheck disable=SC2086
step "attention versions (bench/gpu_attention.py)" 150 python3 bench/gpu_attention.py --out "$OUTDIR" ${ATTN_ARGS:-}
step "tensor-core matmul versions (bench/gpu_matmul.py --bf16)" 90 python3 bench/gpu_matmul.py --bf16 --out "$OUTDIR"
step "tensor-core attention forward (bench/gpu_attention_bf16.py)" 40 python3 bench/gpu_attention_bf16.py --out "$OUTDIR"
step "attention backward (bench/gpu_attention_backward.py)" 60 python3 bench/gpu_attention_backward.py --out "$OUTDIR"
step "lessons in GPU mode (tools/run_notebook_as_script.py)" 150 env COURSE_MODE=gpu \
  python3 tools/run_notebook_as_script.py notebooks/*.ipynb --figures "$OUTDIR/lesson_runs" --jobs 3
echo "[gpu_all] done in $((SECONDS - START)) s; files:"
ls -l "$OUTDIR"
