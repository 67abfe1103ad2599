"""Check the FlashAttention kernels that use warp intrinsics on the CPU, with gpusim (no GPU needed).

Numba's own simulator has no warp shuffles; gpusim runs the unchanged kernel, checks races, barriers
and bounds, and we compare O and the logsumexp with a float64 numpy reference at small sizes.
Usage:  python3 bench/check_attention_gpusim.py [--big]   (--big adds the benchmark's 256-row tile)
"""

import math
import os
import sys
import time

import numpy as np

# gpusim rejects shared.array(alignment=...); under the simulator flag the factory leaves it out
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gpusim  # noqa: E402
from course.kernels import attention as at  # noqa: E402


def reference(q, k, v, causal):
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / math.sqrt(q.shape[2])
    if causal:
        n = q.shape[1]
        s = np.where(np.arange(n)[None, :] > np.arange(n)[:, None], -np.inf, s)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    lse = (m + np.log(p.sum(-1, keepdims=True)))[..., 0]
    return (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64), lse


def check(name, launch, BH, N, D, causal, BQ, NT, checked=True, seed=0):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((BH, N, D)).astype(np.float32) for _ in range(3))
    o = np.full((BH, N, D), np.nan, np.float32)
    lse = np.full((BH, N), np.nan, np.float32)
    kern = gpusim.jit(launch.kernel, check=checked)
    t0 = time.perf_counter()
    kf, vf = k.reshape(-1), v.reshape(-1)  # version 6 takes K and V flattened
    kern[(N // BQ, BH), NT, 0, launch.shared_bytes](q, kf, vf, o, lse, at.q_scale(D))
    ro, rl = reference(q, k, v, causal)
    err = np.linalg.norm(o - ro) / np.linalg.norm(ro)
    lerr = np.abs(lse - rl).max()
    rep = kern.report
    ok = err < 1e-5 and lerr < 1e-4
    print(
        f"{name:44s} BH={BH} N={N:4d} D={D} causal={causal!s:5s} rel err {err:.1e} lse err {lerr:.1e} "
        f"barriers {rep.barriers} bank conflicts {rep.bank_conflicts} "
        f"({time.perf_counter() - t0:.0f} s) {'ok' if ok else 'FAILED'}",
        flush=True,
    )
    return ok


def main():
    ok = True
    # gpusim logs each access's bytecode offset in 16 bits, so with the checks on it takes generated
    # kernels of up to 64 KiB of bytecode: small tiles here (the same code paths: shuffles over 4 and 8
    # lanes, swizzles, double buffer, several warps); --big runs the benchmark's tile unchecked.
    configs = [  # D, BQ, BKV, TX, TY, UNROLL, BH, N
        (16, 64, 16, 4, 16, 2, 2, 192),
        (32, 16, 32, 8, 4, 2, 2, 96),
        (64, 32, 32, 8, 8, 4, 1, 128),
    ]
    for causal in (False, True):
        for D, BQ, BKV, TX, TY, U, BH, N in configs:
            f = at.make_flash_v6(D, BQ, BKV, TX, TY, causal, UNROLL=U)
            name = f"v6 D={D} BQ={BQ} BKV={BKV} TX={TX} TY={TY} U{U}"
            ok &= check(name, f, BH, N, D, causal, BQ, TX * TY)
        if "--big" in sys.argv:
            f = at.make_flash_v6(64, 256, 64, 8, 32, causal, UNROLL=4)  # the benchmark's "numba 6"
            ok &= check("v6 BQ=256 BKV=64 TX=8 TY=32 U4 (unchecked)", f, 1, 512, 64, causal, 256, 256, False)
    print("all ok" if ok else "SOME FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
