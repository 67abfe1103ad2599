"""Ring attention's pieces, in PyTorch: who holds which positions, how much work each step is, one block of
attention with its logsumexp, and the merge of two partial results.

P devices each hold a block of query rows and one block of K/V rows. In step s, device r computes its queries
against the K/V block that started on device (r - s) mod P, then passes that block on to device r + 1. After
P steps every query block has met every K/V block, and the partial results are merged with the online
softmax: a partial result is (o, lse), the normalised output and the logsumexp of the scores it has seen.

Layouts (``positions``): *contiguous* gives device r the positions r·N/P ... (r+1)·N/P - 1; *striped* gives
it r, r + P, r + 2P, ... Under a causal mask (key j counts for query i when j <= i) the contiguous layout
leaves a device idle whenever its K/V block lies wholly in the future of its queries; stripes give every
device almost the same work in every step.
"""

from __future__ import annotations

import math

import torch

LAYOUTS = ("contiguous", "striped")


def positions(n: int, world: int, layout: str) -> list[torch.Tensor]:
    """The sequence positions each of `world` devices holds (n a multiple of world)."""
    if n % world:
        raise ValueError(f"n = {n} must be a multiple of the number of devices ({world})")
    if layout == "contiguous":
        size = n // world
        return [torch.arange(r * size, (r + 1) * size) for r in range(world)]
    if layout == "striped":
        return [torch.arange(r, n, world) for r in range(world)]
    raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")


def source(rank: int, step: int, world: int) -> int:
    """The device whose K/V block device `rank` holds in `step` of the ring."""
    return (rank - step) % world


def work(q_pos: torch.Tensor, k_pos: torch.Tensor, causal: bool) -> int:
    """(query, key) pairs a device computes for one block pair: all of them, or the causal ones."""
    if not causal:
        return len(q_pos) * len(k_pos)
    return int((k_pos[None, :] <= q_pos[:, None]).sum())


def work_per_step(n: int, world: int, layout: str, causal: bool = True) -> list[list[int]]:
    """work[step][rank] for one ring pass."""
    pos = positions(n, world, layout)
    return [[work(pos[r], pos[source(r, s, world)], causal) for r in range(world)] for s in range(world)]


def block_attention(q, k, v, q_pos, k_pos, causal: bool):
    """(o, lse) of queries q against one K/V block, float32 in, float32 out, shapes (heads, n, d) and
    (heads, n). A query that sees no key of the block gets o = 0 and lse = -inf."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        scores = scores.masked_fill(k_pos[None, None, :] > q_pos[None, :, None], float("-inf"))
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
