"""Memory access view: one warp-level access, its 32 lanes' addresses over 32-byte sectors (how well
global memory accesses coalesce) and over the 32 shared-memory banks (bank conflicts)."""

from collections import namedtuple

import numpy as np
from matplotlib.patches import Rectangle

from ..context import WARP_SIZE
from .drawing import HIGHLIGHT, new_view
from .recording import dim3, linear, record
from .widgets import explorer, have_widgets, int_slider

SECTOR_BYTES = 32
BANKS = 32
BANK_WORD_BYTES = 4

Request = namedtuple("Request", "block warp epoch array space kind line lanes addresses itemsize")
Request.__doc__ = """One warp-level access: the k-th execution of one load or store by the lanes of a warp
since the last barrier. `lanes` and `addresses` (bytes from the array's start) are parallel lists."""


def sectors(addresses, itemsize):
    """The distinct 32-byte sectors the bytes of these elements fall in."""
    return sorted({s for a in addresses
                   for s in range(a // SECTOR_BYTES, (a + itemsize - 1) // SECTOR_BYTES + 1)})


def bank_words(addresses, itemsize):
    """{bank: sorted distinct 4-byte words of that bank} for these elements."""
    banks = {}
    for a in addresses:
        for word in range(a // BANK_WORD_BYTES, (a + itemsize - 1) // BANK_WORD_BYTES + 1):
            banks.setdefault(word % BANKS, set()).add(word)
    return {bank: sorted(words) for bank, words in sorted(banks.items())}


def bank_conflicts(addresses, itemsize):
    """Extra shared-memory passes: the most distinct words in one bank, minus 1 (same word = broadcast)."""
    banks = bank_words(addresses, itemsize)
    return max((len(words) for words in banks.values()), default=1) - 1


def requests(recording, block_id=None, warp=None):
    """The warp-level accesses of a recording (optionally of one block and one warp), in trace order.
    Atomics are left out, as Report counts them apart."""
    block = None if block_id is None else dim3(block_id, recording.grid)
    grouped = {}
    seen = {}
    for a in recording.trace:
        if a.kind == "atomic" or (block is not None and tuple(a.block) != block):
            continue
        thread = linear(a.thread, recording.block)
        lane_warp, lane = divmod(thread, WARP_SIZE)
        if warp is not None and lane_warp != warp:
            continue
        instruction = (tuple(a.block), lane_warp, a.epoch, a.array, a.kind, a.line)
        occurrence = seen.get((instruction, lane), 0)
        seen[(instruction, lane)] = occurrence + 1
        grouped.setdefault((instruction, occurrence), []).append((lane, a.index))
    result = []
    for ((blk, lane_warp, epoch, name, kind, line), _), lanes in grouped.items():
        info = recording.arrays[name]
        flat = [int(np.ravel_multi_index(i if isinstance(i, tuple) else (i,), info.shape)) for _, i in lanes]
        result.append(Request(blk, lane_warp, epoch, name, info.space, kind, line,
                              [lane for lane, _ in lanes], [f * info.itemsize for f in flat], info.itemsize))
    return result


def access_counts(recording):
    """Sector and bank-conflict totals over all warp-level accesses, named as in gpusim.Report."""
    counts = dict(global_requests=0, global_sectors=0, shared_requests=0, bank_conflicts=0)
    for r in requests(recording):
        if r.space == "global":
            counts["global_requests"] += 1
            counts["global_sectors"] += len(sectors(r.addresses, r.itemsize))
        else:
            counts["shared_requests"] += 1
            counts["bank_conflicts"] += bank_conflicts(r.addresses, r.itemsize)
    return counts


def _draw_sectors(ax, lanes, addresses, itemsize, space="global"):
    touched = sectors(addresses, itemsize)
    slot = {s: k for k, s in enumerate(touched)}
    for s, k in slot.items():
        ax.add_patch(Rectangle((k, -0.5), 1, WARP_SIZE, facecolor=("#fde0c5" if k % 2 else "#fbd0a8"),
                               edgecolor="grey", linewidth=0.5))
        if len(touched) <= 16:
            ax.text(k + 0.5, -0.7, f"sector {s}\nbytes {s * SECTOR_BYTES}-{s * SECTOR_BYTES + 31}",
                    ha="center", va="bottom", fontsize=6)
    xs = [slot[a // SECTOR_BYTES] + (a % SECTOR_BYTES + itemsize / 2) / SECTOR_BYTES for a in addresses]
    ax.scatter(xs, lanes, s=12, color="#1f77b4", zorder=3)
    ax.set_xlim(0, max(len(touched), 1))
    ax.set_ylim(WARP_SIZE - 0.5, -0.5 - (2.5 if len(touched) <= 16 else 0))
    ax.set_xticks([])
    ax.set_xlabel("the 32-byte sectors the access touches, in address order (a dot: one lane's element)",
                  fontsize=8)
    ax.set_ylabel("lane", fontsize=8)
    ideal = -(-len(set(addresses)) * itemsize // SECTOR_BYTES)
    where = "global memory" if space == "global" else "were this global memory"
    ax.set_title(f"{where}: {len(touched)} sector(s) of 32 bytes moved (at best {ideal})", fontsize=9)
    return len(touched)


def _draw_banks(ax, lanes, addresses, itemsize, space="shared"):
    banks = bank_words(addresses, itemsize)
    depth = max((len(w) for w in banks.values()), default=1)
    lanes_of_word = {}
    for lane, a in zip(lanes, addresses, strict=True):
        for word in range(a // BANK_WORD_BYTES, (a + itemsize - 1) // BANK_WORD_BYTES + 1):
            lanes_of_word.setdefault(word, []).append(lane)
    for bank, words in banks.items():
        for row, word in enumerate(words):
            colour = HIGHLIGHT if len(words) > 1 else "#8fd18f"
            ax.add_patch(Rectangle((bank - 0.5, row - 0.5), 1, 1, facecolor=colour, edgecolor="white",
                                   alpha=0.8))
            who = lanes_of_word[word]
            if depth <= 12:
                ax.text(bank, row, str(who[0]) if len(who) == 1 else f"{len(who)}L", ha="center", va="center",
                        fontsize=6)
    ax.set_xlim(-0.5, BANKS - 0.5)
    ax.set_ylim(max(depth, 1) - 0.5, -0.5)
    ax.set_xticks(range(0, BANKS, 4))
    ax.set_yticks(range(0, depth, 1 if depth <= 8 else 4))
    ax.set_xlabel("bank (4-byte word number mod 32); number = lane, nL = n lanes share one word;\n"
                  "green: the bank serves one word, red: it serves several, one pass each (a conflict)",
                  fontsize=8)
    ax.set_ylabel("pass", fontsize=8)
    conflicts = depth - 1
    where = "shared memory banks" if space == "shared" else "were this shared memory"
    ax.set_title(f"{where}: {depth} pass(es), {conflicts} bank conflict(s)", fontsize=9)
    return conflicts


def draw_lanes(lanes, addresses, itemsize=4, title="", space="global"):
    """The picture of one warp-level access, from its lanes and byte addresses; the panel of `space`
    (global: sectors, shared: banks) is drawn larger."""
    depth = max(len(w) for w in bank_words(addresses, itemsize).values())
    bank_height = min(4.0, 0.8 + 0.25 * depth) * (1.6 if space == "shared" else 1)
    sector_height = 3.5 if space == "global" else 2.2
    view = new_view(9, 1 + sector_height + bank_height)
    top, bottom = view.subplots(2, 1, height_ratios=[sector_height, bank_height])
    view.facts["sectors"] = _draw_sectors(top, lanes, addresses, itemsize, space)
    view.facts["bank_conflicts"] = _draw_banks(bottom, lanes, addresses, itemsize, space)
    view.suptitle(title, fontsize=10)
    return view


def warp_pattern(index_of_lane, itemsize=4, name="a"):
    """Draw the access `a[index_of_lane(lane)]` of a full warp (lanes 0-31), without running a kernel:
    e.g. warp_pattern(lambda lane: 2 * lane) for a stride of 2."""
    lanes = list(range(WARP_SIZE))
    addresses = [int(index_of_lane(lane)) * itemsize for lane in lanes]
    view = draw_lanes(lanes, addresses, itemsize, f"{name}[f(lane)] with {itemsize}-byte elements")
    view.facts["caption"] = f"{view.facts['sectors']} sectors, {view.facts['bank_conflicts']} bank conflicts"
    return view


def memory_access(kernel, grid=None, block=None, args=(), *, block_id=0, warp=0, request=0, shared_bytes=0):
    """Draw the `request`-th warp-level access of warp `warp` in block `block_id` of a launch: its lanes
    over 32-byte sectors and over the 32 banks. A global access counts its sectors in
    Report.global_sectors, a shared one its conflicts in Report.bank_conflicts."""
    rec = record(kernel, grid, block, args, shared_bytes)
    found = requests(rec, block_id, warp)
    if not found:
        raise ValueError(f"warp {warp} of block {block_id} made no memory access.")
    if not 0 <= request < len(found):
        raise ValueError(f"warp {warp} of block {block_id} made {len(found)} accesses: "
                         f"request must be 0..{len(found) - 1}.")
    r = found[request]
    title = (f"{rec.name}: block {r.block[:2]}, warp {r.warp}, access {request} of {len(found)}: "
             f"{r.kind} of {r.array} ({r.space}) at line {r.line}, {len(r.lanes)} lanes")
    view = draw_lanes(r.lanes, r.addresses, r.itemsize, title, r.space)
    counted = "sectors" if r.space == "global" else "bank_conflicts"
    view.facts.update(request=r, counted=counted, caption=(
        f"access {request}: {r.kind} {r.array} ({r.space}), line {r.line}: {view.facts['sectors']} sectors, "
        f"{view.facts['bank_conflicts']} bank conflicts; Report counts the {counted.replace('_', ' ')}"))
    return view


def memory_access_widget(kernel, grid=None, block=None, args=(), *, shared_bytes=0):
    """The memory access view with block, warp and access sliders. Static (first access) without widgets."""
    rec = record(kernel, grid, block, args, shared_bytes)
    if not have_widgets():
        return memory_access(rec)
    warps = -(-rec.threads_per_block // WARP_SIZE)
    most = max((len(requests(rec, 0, w)) for w in range(warps)), default=1)
    controls = {"block_id": int_slider("block", rec.block_count - 1), "warp": int_slider("warp", warps - 1),
                "request": int_slider("access", most - 1)}

    def render(block_id, warp, request):
        count = len(requests(rec, block_id, warp))
        return memory_access(rec, block_id=block_id, warp=warp, request=min(request, max(count - 1, 0)))

    return explorer(render, controls, "gpusim-memory")
