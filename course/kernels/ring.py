"""Ring attention's pieces, in PyTorch: who holds which positions, how much work each step is, which calls of
an ordinary attention kernel compute one block pair, one block of attention with its logsumexp, and the merge
of two partial results.

P devices each hold a block of query rows and one block of K/V rows. In step s, device r computes its queries
against the K/V block that started on device (r - s) mod P, then passes that block on to device r + 1. After
P steps every query block has met every K/V block, and the partial results are merged with the online
softmax: a partial result is (o, lse), the normalised output and the logsumexp of the scores it has seen.

Layouts (``positions``), for a causal mask (key j counts for query i when j <= i):

* *contiguous*: device r holds r·N/P ... (r+1)·N/P - 1. A device idles whenever its K/V block lies wholly in
  the future of its queries, and the last device works in every step.
* *striped*: device r holds r, r + P, r + 2P, ... Query a of device r is position aP + r, key b of device s
  is bP + s, and bP + s <= aP + r exactly when b <= a (s <= r) or b <= a - 1 (s > r): between any two
  devices the mask is *lower-triangular*, with or without its diagonal. An ordinary causal kernel with a
  diagonal offset of 0 or -1 computes it, and still skips every tile above the diagonal.
* *zigzag*: the sequence is cut into 2P chunks and device r holds chunks r and 2P - 1 - r, one early and one
  late (the layout of context-parallel training). Against its own block a device runs an ordinary causal
  kernel; against an earlier device's block, all its queries meet that block's early chunk; against a later
  device's block, its late chunk meets the whole block: half the block pairs in every step but the first.

Pair counts (``pairs``) are closed forms: nothing here builds an N x N mask, except the float64 reference.
"""

from __future__ import annotations

import math

import torch

LAYOUTS = ("contiguous", "striped", "zigzag")
MODES = ("full", "causal", "causal-1")  # the kernel calls of a plan: no mask, j <= i, j <= i - 1


def granule(world: int, layout: str) -> int:
    """n must be a multiple of this: one position per device (two chunks per device for zigzag)."""
    return 2 * world if layout == "zigzag" else world


def positions(n: int, world: int, layout: str) -> list[torch.Tensor]:
    """The sequence positions each of `world` devices holds, in increasing order."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
    if n % granule(world, layout):
        raise ValueError(f"n = {n} must be a multiple of {granule(world, layout)} for the {layout} layout on "
                         f"{world} devices")
    if layout == "contiguous":
        size = n // world
        return [torch.arange(r * size, (r + 1) * size) for r in range(world)]
    if layout == "striped":
        return [torch.arange(r, n, world) for r in range(world)]
    chunk = n // (2 * world)
    early = [torch.arange(r * chunk, (r + 1) * chunk) for r in range(world)]
    late = [torch.arange((2 * world - 1 - r) * chunk, (2 * world - r) * chunk) for r in range(world)]
    return [torch.cat(pair) for pair in zip(early, late, strict=True)]


def source(rank: int, step: int, world: int) -> int:
    """The device whose K/V block device `rank` holds in `step` of the ring."""
    return (rank - step) % world


def plan(rows: int, world: int, layout: str, causal: bool, rank: int, src: int) -> list[tuple]:
    """The kernel calls that compute device `rank`'s queries against device `src`'s K/V block, each holding
    `rows` positions: a list of (query slice, key slice, mode) with mode in MODES, slices of the local
    blocks. An empty list: every key lies after every query (the device idles this step)."""
    every = slice(0, rows)
    if not causal:
        return [(every, every, "full")]
    if layout == "contiguous":
        return [] if src > rank else [(every, every, "full" if src < rank else "causal")]
    if layout == "striped":
        return [(every, every, "causal" if src <= rank else "causal-1")]
    half = rows // 2
    if src == rank:
        return [(every, every, "causal")]  # chunks (r, 2P-1-r) against themselves: in order, one diagonal
    if src < rank:
        return [(every, slice(0, half), "full")]  # every query is later than src's early chunk
    return [(slice(half, rows), every, "full")]  # only my late chunk is later than src's chunks


def pairs(n: int, world: int, layout: str, causal: bool, rank: int, src: int) -> int:
    """(query, key) pairs device `rank` computes against device `src`'s block, in closed form."""
    if layout not in LAYOUTS or n % granule(world, layout):
        raise ValueError(f"{layout!r} on {world} devices: layout one of {LAYOUTS}, n = {n} a multiple of "
                         f"{granule(world, layout)}")
    rows = n // world
    total = 0
    for q, k, mode in plan(rows, world, layout, causal, rank, src):
        nq, nk = q.stop - q.start, k.stop - k.start
        total += {"full": nq * nk, "causal": nq * (nq + 1) // 2, "causal-1": nq * (nq - 1) // 2}[mode]
    return total


def work_per_step(n: int, world: int, layout: str, causal: bool = True) -> list[list[int]]:
    """work[step][rank]: the (query, key) pairs of one ring pass, per step and device."""
    return [[pairs(n, world, layout, causal, r, source(r, s, world)) for r in range(world)]
            for s in range(world)]


def count_pairs(q_pos: torch.Tensor, k_pos: torch.Tensor, causal: bool) -> int:
    """Pairs with key position <= query position, counted by binary search (positions increasing):
    the check of `pairs` and `plan` for any layout, O(n log n) and no N x N mask."""
    if not causal:
        return len(q_pos) * len(k_pos)
    return int(torch.searchsorted(k_pos, q_pos, right=True).sum())


def local_attention(q, k, v, mode: str):
    """(o, lse) of one kernel call of a plan, in PyTorch: mode 'full', or causal with key j seen by query i
    when j <= i ('causal') or j <= i - 1 ('causal-1'). A row that sees no key gets o = 0, lse = -inf."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if mode != "full":
        offset = 0 if mode == "causal" else -1
        scores = scores.masked_fill(torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device)
                                    .triu_(1 + offset), float("-inf"))
    return _normalised(scores, v)


def block_attention(q, k, v, q_pos, k_pos, causal: bool):
    """(o, lse) of queries q against one K/V block, with the causal mask taken from the positions, shapes
    (heads, n, d) and (heads, n). A query that sees no key of the block gets o = 0 and lse = -inf."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        scores = scores.masked_fill(k_pos[None, None, :] > q_pos[None, :, None], float("-inf"))
    return _normalised(scores, v)


def _normalised(scores, v):
    lse = torch.logsumexp(scores, dim=-1)
    weights = torch.exp(scores - lse[..., None]).nan_to_num_(0.0)  # rows with lse = -inf: all zero
    return torch.matmul(weights, v), lse


def merge(o, lse, o_block, lse_block):
    """Merge two partial results of the same queries: the online softmax on (o, lse) pairs.
    exp(lse) is a row's sum of exp(scores); each output is weighted by its share of the total."""
    total = torch.logaddexp(lse, lse_block)
    safe = torch.where(torch.isinf(total), torch.zeros_like(total), total)  # both -inf: no key yet
    w_old = torch.exp(lse - safe)[..., None]
    w_new = torch.exp(lse_block - safe)[..., None]
    return o * w_old + o_block * w_new, total


def attention64(q, k, v, causal: bool):
    """Reference attention in float64: (o, lse) for (heads, n, d) tensors."""
    q, k, v = q.double(), k.double(), v.double()
    n = q.shape[-2]
    pos = torch.arange(n, device=q.device)
    return block_attention(q, k, v, pos, pos, causal)
