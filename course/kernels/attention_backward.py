"""FlashAttention backward (float32) in Numba CUDA: dQ, dK, dV by recomputation, P never stored.

Lesson 07's NumPy ``flash_backward`` made real.  The forward pass saved O and the row logsumexp L (natural
log of the scaled scores, what ``attention.make_flash_*`` write); from them any tile of P is rebuilt as
P_ij = exp(s q_i.k_j - L_i), with s = 1/sqrt(d).  With dO given and D_i = sum_c dO_ic O_ic:

    dV = P^T dO,   dP = dO V^T,   dS = P o (dP - D),   dQ = s dS K,   dK = s dS^T Q.

Two kernels, each owning one kind of output, so that no two blocks ever add to the same element (no
atomics, the result does not depend on the order blocks run in, and gpusim checks it race-free):

1. ``dq`` kernel: one block per tile of BQ query rows, one thread per row, walking the key tiles (K and V
   staged in shared memory).  Per key: s and dP (2d FMAs), then dQ_i += dS_ij k_j (d FMAs).  It also
   computes D_i from its own row of dO and O and writes it to ``Delta`` for the second kernel.
2. ``dkdv`` kernel: one block per tile of BKV key rows, one thread per key, walking the query tiles (Q, dO,
   L and D staged in shared memory).  Per query row: s and dP again (recomputed: 2d FMAs), then
   dV_j += P_ij dO_i and dK_j += dS_ij q_i (2d FMAs).  The thread's own k_j and v_j live in shared memory
   stored transposed (column ``tid``), so the 32 lanes of a warp read 32 neighbouring words.

FlashAttention-2 fuses the two into one pass (5 products instead of 7) by adding each block's dQ tile to
global memory with atomic adds; splitting costs two recomputed products and buys determinism.
Scores are in base 2 as in the forward: Q is scaled by s*log2(e), so exp becomes exp2.
Any N works (rows past N are masked); ``CAUSAL`` skips the tiles above the diagonal.
"""

import math

from numba import cuda, float32

LOG2E = float32(1.0 / math.log(2.0))
LN2 = float32(math.log(2.0))


def make_flash_backward(D, BQ=64, BKV=64, CAUSAL=False):
    """launch(Q, K, V, O, dO, L, dQ, dK, dV, Delta): the two kernels above for head dimension D.

    Arrays are (BH, N, D) float32 (L and Delta: (BH, N)); Delta is scratch the first kernel fills.
    """
    assert (BKV * D) % BQ == 0 and (BQ * D) % BKV == 0

    @cuda.jit
    def dq_kernel(Q, K, V, O, dO, L, Delta, dQ, qscale, scale):  # noqa: E741
        sK = cuda.shared.array((BKV, D), float32)
        sV = cuda.shared.array((BKV, D), float32)
        q = cuda.local.array(D, float32)
        do = cuda.local.array(D, float32)
        acc = cuda.local.array(D, float32)
        tid = cuda.threadIdx.x
        bh = cuda.blockIdx.y
        N = Q.shape[1]
        qb = cuda.gridDim.x - 1 - cuda.blockIdx.x if CAUSAL else cuda.blockIdx.x  # causal: longest first
        i = qb * BQ + tid
        ii = min(i, N - 1)  # rows past N compute on a copy of the last row and write nothing
        delta = float32(0.0)
        for c in range(D):
            q[c] = Q[bh, ii, c] * qscale
            do[c] = dO[bh, ii, c]
            delta += do[c] * O[bh, ii, c]
            acc[c] = 0.0
        lrow = L[bh, ii] * LOG2E
        if i < N:
            Delta[bh, i] = delta
        kend = min(N, qb * BQ + BQ) if CAUSAL else N
        for k0 in range(0, kend, BKV):
            for p in range((BKV * D) // BQ):  # cooperative, coalesced tile loads (zeros past N)
                idx = tid + BQ * p
                r = idx // D
                c = idx % D
                kr = min(k0 + r, N - 1)
                sK[r, c] = K[bh, kr, c]
                sV[r, c] = V[bh, kr, c]
            cuda.syncthreads()
            jend = min(BKV, N - k0)
            if CAUSAL:
                jend = min(jend, i - k0 + 1)  # keys up to this row's own index
            for j in range(jend):
                s = float32(0.0)
                dp = float32(0.0)
                for c in range(D):
                    s += q[c] * sK[j, c]
                    dp += do[c] * sV[j, c]
                ds = math.exp2(s - lrow) * (dp - delta)
                for c in range(D):
                    acc[c] += ds * sK[j, c]
            cuda.syncthreads()  # every thread is done with the tile before the next one overwrites it
        if i < N:
            for c in range(D):
                dQ[bh, i, c] = acc[c] * scale

    @cuda.jit
    def dkdv_kernel(Q, K, V, dO, L, Delta, dK, dV, qscale):  # noqa: E741
        sQ = cuda.shared.array((BQ, D), float32)
        sdO = cuda.shared.array((BQ, D), float32)
        sL = cuda.shared.array(BQ, float32)
        sD = cuda.shared.array(BQ, float32)
        sKt = cuda.shared.array((D, BKV), float32)  # this block's K, transposed: column tid is my k_j
        sVt = cuda.shared.array((D, BKV), float32)
        dk = cuda.local.array(D, float32)
        dv = cuda.local.array(D, float32)
        tid = cuda.threadIdx.x
        bh = cuda.blockIdx.y
        N = Q.shape[1]
        j = cuda.blockIdx.x * BKV + tid
        jj = min(j, N - 1)
        for c in range(D):
            sKt[c, tid] = K[bh, jj, c]
            sVt[c, tid] = V[bh, jj, c]
            dk[c] = 0.0
            dv[c] = 0.0
        qstart = ((cuda.blockIdx.x * BKV) // BQ) * BQ if CAUSAL else 0  # tiles above the diagonal: none
        for q0 in range(qstart, N, BQ):
            cuda.syncthreads()  # the previous tile's reads are done (and, the first time, sKt, sVt written)
            for p in range((BQ * D) // BKV):
                idx = tid + BKV * p
                r = idx // D
                c = idx % D
                qr = min(q0 + r, N - 1)
                sQ[r, c] = Q[bh, qr, c] * qscale
                sdO[r, c] = dO[bh, qr, c]
            for r in range(tid, BQ, BKV):
                qr = min(q0 + r, N - 1)
                sL[r] = L[bh, qr] * LOG2E
                sD[r] = Delta[bh, qr]
            cuda.syncthreads()
            iend = min(BQ, N - q0)
            istart = 0
            if CAUSAL:
                istart = max(0, j - q0)  # queries before this key do not see it
            for i in range(istart, iend):
                s = float32(0.0)
                dp = float32(0.0)
                for c in range(D):
                    s += sQ[i, c] * sKt[c, tid]
                    dp += sdO[i, c] * sVt[c, tid]
                p = math.exp2(s - sL[i])
                ds = p * (dp - sD[i])
                for c in range(D):
                    dv[c] += p * sdO[i, c]
                    dk[c] += ds * sQ[i, c]
        if j < N:
            for c in range(D):
                dK[bh, j, c] = dk[c] * LN2  # Q was scaled by s*log2(e): dK = s dS^T Q
                dV[bh, j, c] = dv[c]

    def launch(Q, K, V, O, dO, L, dQ, dK, dV, Delta, wrap=None):  # noqa: E741
        """Run both kernels; ``wrap`` (e.g. ``gpusim.jit``) replaces each kernel first: returns the two
        kernels as launched."""
        BH, N, _ = Q.shape
        scale = 1.0 / math.sqrt(D)
        qscale = float32(scale * LOG2E)
        dq, dkdv = (wrap(k) if wrap else k for k in (dq_kernel, dkdv_kernel))
        dq[((N + BQ - 1) // BQ, BH), BQ](Q, K, V, O, dO, L, Delta, dQ, qscale, float32(scale))
        dkdv[((N + BKV - 1) // BKV, BH), BKV](Q, K, V, dO, L, Delta, dK, dV, qscale)
        return dq, dkdv

    launch.kernels = (dq_kernel, dkdv_kernel)
    return launch


def make_flash_backward_v2(D, BQ=64, BKV=64, CAUSAL=False, R=2, SPLIT=4):
    """Version 2: SPLIT lanes share a row, each with D/SPLIT of its columns, and every thread owns R rows.

    Version 1 reads one shared value per multiply-add (a thread owns a whole row, so nothing it loads serves
    a second row).  Here the SPLIT = 4 neighbouring lanes of a row each hold every 4th column (so a warp's
    loads of one shared row touch 4 consecutive banks: no conflicts), and each thread does that for R rows:
    a value loaded from shared memory serves R rows, and a thread keeps R * 3 * D/SPLIT numbers in registers
    instead of 3 * D.  The dot products of a row (its scores s and dP) are summed over its SPLIT lanes by
    two ``shfl_xor_sync`` steps.  Loops have the same trip count in every lane (the shuffles need the whole
    warp): causal masking zeroes P instead of shortening a row's loop.
    """
    DS = D // SPLIT
    assert D % SPLIT == 0 and SPLIT in (2, 4, 8) and BQ % R == 0 and BKV % R == 0
    NTQ, NTK = (BQ // R) * SPLIT, (BKV // R) * SPLIT  # threads of the two kernels
    GQ, GK = BQ // R, BKV // R  # rows between a thread's R rows
    assert (BKV * D) % NTQ == 0 and (BQ * D) % NTK == 0 and NTQ % 32 == 0 and NTK % 32 == 0
    FULL = 0xFFFFFFFF
    STEPS = tuple(2**k for k in range(SPLIT.bit_length() - 1))  # butterfly over a row's SPLIT lanes

    @cuda.jit
    def dq_kernel(Q, K, V, O, dO, L, Delta, dQ, qscale, scale):  # noqa: E741
        sK = cuda.shared.array((BKV, D), float32)
        sV = cuda.shared.array((BKV, D), float32)
        q = cuda.local.array((R, DS), float32)
        do = cuda.local.array((R, DS), float32)
        acc = cuda.local.array((R, DS), float32)
        kj = cuda.local.array(DS, float32)
        vj = cuda.local.array(DS, float32)
        lrow = cuda.local.array(R, float32)
        delta = cuda.local.array(R, float32)
        tid = cuda.threadIdx.x
        part = tid % SPLIT  # my columns: part, part + SPLIT, ...
        grp = tid // SPLIT
        bh = cuda.blockIdx.y
        N = Q.shape[1]
        qb = cuda.gridDim.x - 1 - cuda.blockIdx.x if CAUSAL else cuda.blockIdx.x
        for r in range(R):
            i = min(qb * BQ + grp + GQ * r, N - 1)
            d = float32(0.0)
            for u in range(DS):
                c = part + SPLIT * u
                q[r, u] = Q[bh, i, c] * qscale
                do[r, u] = dO[bh, i, c]
                d += do[r, u] * O[bh, i, c]
                acc[r, u] = 0.0
            for step in STEPS:
                d += cuda.shfl_xor_sync(FULL, d, step)
            delta[r] = d
            lrow[r] = L[bh, i] * LOG2E
            if part == 0 and qb * BQ + grp + GQ * r < N:
                Delta[bh, qb * BQ + grp + GQ * r] = delta[r]
        kend = min(N, qb * BQ + BQ) if CAUSAL else N
        for k0 in range(0, kend, BKV):
            for p in range((BKV * D) // NTQ):
                idx = tid + NTQ * p
                kr = min(k0 + idx // D, N - 1)
                sK[idx // D, idx % D] = K[bh, kr, idx % D]
                sV[idx // D, idx % D] = V[bh, kr, idx % D]
            cuda.syncthreads()
            for j in range(min(BKV, N - k0)):
                for u in range(DS):
                    kj[u] = sK[j, part + SPLIT * u]
                    vj[u] = sV[j, part + SPLIT * u]
                for r in range(R):
                    s = float32(0.0)
                    dp = float32(0.0)
                    for u in range(DS):
                        s += q[r, u] * kj[u]
                        dp += do[r, u] * vj[u]
                    for step in STEPS:  # sum over the row's SPLIT lanes
                        s += cuda.shfl_xor_sync(FULL, s, step)
                        dp += cuda.shfl_xor_sync(FULL, dp, step)
                    p = math.exp2(s - lrow[r])
                    if CAUSAL and k0 + j > qb * BQ + grp + GQ * r:
                        p = float32(0.0)
                    ds = p * (dp - delta[r])
                    for u in range(DS):
                        acc[r, u] += ds * kj[u]
            cuda.syncthreads()
        for r in range(R):
            i = qb * BQ + grp + GQ * r
            if i < N:
                for u in range(DS):
                    dQ[bh, i, part + SPLIT * u] = acc[r, u] * scale

    @cuda.jit
    def dkdv_kernel(Q, K, V, dO, L, Delta, dK, dV, qscale):  # noqa: E741
        sQ = cuda.shared.array((BQ, D), float32)
        sdO = cuda.shared.array((BQ, D), float32)
        sL = cuda.shared.array(BQ, float32)
        sD = cuda.shared.array(BQ, float32)
        kk = cuda.local.array((R, DS), float32)
        vv = cuda.local.array((R, DS), float32)
        dk = cuda.local.array((R, DS), float32)
        dv = cuda.local.array((R, DS), float32)
        qi = cuda.local.array(DS, float32)
        doi = cuda.local.array(DS, float32)
        tid = cuda.threadIdx.x
        part = tid % SPLIT
        grp = tid // SPLIT
        bh = cuda.blockIdx.y
        N = Q.shape[1]
        key0 = cuda.blockIdx.x * BKV
        for r in range(R):
            j = min(key0 + grp + GK * r, N - 1)
            for u in range(DS):
                kk[r, u] = K[bh, j, part + SPLIT * u]
                vv[r, u] = V[bh, j, part + SPLIT * u]
                dk[r, u] = 0.0
                dv[r, u] = 0.0
        qstart = (key0 // BQ) * BQ if CAUSAL else 0
        for q0 in range(qstart, N, BQ):
            cuda.syncthreads()  # the previous tile's reads are done
            for p in range((BQ * D) // NTK):
                idx = tid + NTK * p
                qr = min(q0 + idx // D, N - 1)
                sQ[idx // D, idx % D] = Q[bh, qr, idx % D] * qscale
                sdO[idx // D, idx % D] = dO[bh, qr, idx % D]
            for row in range(tid, BQ, NTK):
                qr = min(q0 + row, N - 1)
                sL[row] = L[bh, qr] * LOG2E
                sD[row] = Delta[bh, qr]
            cuda.syncthreads()
            for i in range(min(BQ, N - q0)):
                for u in range(DS):
                    qi[u] = sQ[i, part + SPLIT * u]
                    doi[u] = sdO[i, part + SPLIT * u]
                li = sL[i]
                di = sD[i]
                for r in range(R):
                    s = float32(0.0)
                    dp = float32(0.0)
                    for u in range(DS):
                        s += qi[u] * kk[r, u]
                        dp += doi[u] * vv[r, u]
                    for step in STEPS:  # sum over the row's SPLIT lanes
                        s += cuda.shfl_xor_sync(FULL, s, step)
                        dp += cuda.shfl_xor_sync(FULL, dp, step)
                    p = math.exp2(s - li)
                    if CAUSAL and q0 + i < key0 + grp + GK * r:
                        p = float32(0.0)
                    ds = p * (dp - di)
                    for u in range(DS):
                        dv[r, u] += p * doi[u]
                        dk[r, u] += ds * qi[u]
        for r in range(R):
            j = key0 + grp + GK * r
            if j < N:
                for u in range(DS):
                    dK[bh, j, part + SPLIT * u] = dk[r, u] * LN2
                    dV[bh, j, part + SPLIT * u] = dv[r, u]

    def launch(Q, K, V, O, dO, L, dQ, dK, dV, Delta, wrap=None):  # noqa: E741
        """Run both kernels (see make_flash_backward's launch)."""
        BH, N, _ = Q.shape
        scale = 1.0 / math.sqrt(D)
        qscale = float32(scale * LOG2E)
        dq, dkdv = (wrap(k) if wrap else k for k in (dq_kernel, dkdv_kernel))
        dq[((N + BQ - 1) // BQ, BH), NTQ](Q, K, V, O, dO, L, Delta, dQ, qscale, float32(scale))
        dkdv[((N + BKV - 1) // BKV, BH), NTK](Q, K, V, dO, L, Delta, dK, dV, qscale)
        return dq, dkdv

    launch.kernels = (dq_kernel, dkdv_kernel)
    return launch
