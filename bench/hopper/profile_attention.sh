#!/bin/sh
# Nsight Compute's Speed of Light, compute and memory sections for the wgmma FlashAttention forward and for
# SDPA's kernels (BH=16, N=4096, d=64, bf16, full), the second launch of each (an NVTX range):
#     sh bench/hopper/profile_attention.sh [OUT_DIR]      (on an H100 or H200, with ncu on PATH)
# writes the CSV rows to ncu_attention_<device>.csv
set -e
out=${1:-bench/results}
tag=$(python3 -c "from bench.common import tag_of, device_name; print(tag_of(device_name()))")
ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --csv \
    --nvtx --nvtx-include "profile/" \
    python3 bench/hopper/profile_attention.py | grep '^"' > "$out/ncu_attention_$tag.csv"
