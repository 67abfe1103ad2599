#!/usr/bin/env bash
# Run every GPU benchmark of the course in one go (one device call).
#   bash bench/gpu_all.sh OUTDIR
# Extra arguments: MATMUL_ARGS="--explore" ATTN_ARGS="--explore" bash bench/gpu_all.sh OUTDIR
# Writes 8 result files (JSON, TXT, PNG) into OUTDIR; copy them into bench/results/.
set -u
OUTDIR=${1:-bench/results}
export PYTHONUNBUFFERED=1
mkdir -p "$OUTDIR"
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv || true
python3 -c "import numpy, numba, numba_cuda, torch; print('numpy', numpy.__version__, 'numba', numba.__version__, \
'numba-cuda', numba_cuda.__version__, 'torch', torch.__version__)"
python3 bench/gpu_sweep.py --out "$OUTDIR" || echo "gpu_sweep.py failed: $?"
# shellcheck disable=SC2086
python3 bench/gpu_matmul.py --out "$OUTDIR" ${MATMUL_ARGS:-} || echo "gpu_matmul.py failed: $?"
# shellcheck disable=SC2086
python3 bench/gpu_attention.py --out "$OUTDIR" ${ATTN_ARGS:-} || echo "gpu_attention.py failed: $?"
