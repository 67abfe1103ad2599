"""Two launches each of the wgmma FlashAttention forward (version 2) and of SDPA, bf16, BH=16, N=4096, d=64,
full: what bench/hopper/profile_attention.sh hands to Nsight Compute (it profiles the NVTX range
"profile", the second launch of each)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch  # noqa: E402

from bench.gpu_attention import sdpa  # noqa: E402
from course.kernels.hopper_attention import make_flash_wgmma  # noqa: E402

BH, N, D = 16, 4096, 64
q, k, v = (torch.randn(BH, N, D, device="cuda").to(torch.bfloat16) for _ in range(3))
out, lse = torch.empty(BH, N, D, device="cuda"), torch.empty(BH, N, device="cuda")
flash = make_flash_wgmma()
flash(q, k, v, out, lse)  # compiles; the NVTX range holds the launches to profile
sdpa(q, k, v, False)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("profile")
flash(q, k, v, out, lse)
sdpa(q, k, v, False)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
