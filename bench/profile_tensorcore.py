"""Run one tensor-core matmul version a few times at 4096^3, for a profiler (Nsight Compute) to look at.

Usage:  ncu --kernel-name regex:mma_pipe --launch-skip 1 --launch-count 1 --section SpeedOfLight \\
            --section WarpStateStats python3 bench/profile_tensorcore.py [KEY=VALUE ...]
KEY=VALUE are make_mma_matmul's arguments (integers), e.g. STAGES=4 WM=64 WN=64.
"""

import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from course.kernels.tensorcore import make_mma_matmul  # noqa: E402


def main():
    config = {k: int(v) for k, v in (arg.split("=") for arg in sys.argv[1:])}
    n = 4096
    A, B = (torch.randn(n, n, device="cuda").to(torch.bfloat16) for _ in range(2))
    C = torch.empty(n, n, device="cuda")
    launch = make_mma_matmul(**config)
    for _ in range(3):
        launch(A, B, C)
    torch.cuda.synchronize()
    print(config, "max abs error", (C - (A.float() @ B.float())).abs().max().item())


if __name__ == "__main__":
    main()
