#!/bin/sh
# Nsight Compute's Speed of Light, compute and memory sections for Hopper rung 19 and for cuBLAS at 4096^3
# (bf16), one launch each after the warm-up call:
#     sh bench/hopper/profile_gemm.sh [OUT_DIR]        (on an H100 or H200, with ncu on PATH)
# writes only the CSV rows of ncu_gemm_v19_<device>.csv and ncu_gemm_cublas_<device>.csv
set -e
out=${1:-bench/results}
tag=$(python3 -c "from bench.common import tag_of, device_name; print(tag_of(device_name()))")
sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --csv"
ncu $sections -k regex:wgmma_tma --launch-skip 1 --launch-count 1 \
    python3 bench/gpu_matmul_hopper.py --sizes 4096 --only 19 --out /tmp/ncu_run | grep '^"' > "$out/ncu_gemm_v19_$tag.csv"
ncu $sections -k regex:nvjet --launch-skip 1 --launch-count 1 \
    python3 bench/gpu_matmul_hopper.py --sizes 4096 --only none --out /tmp/ncu_run | grep '^"' > "$out/ncu_gemm_cublas_$tag.csv"
