"""Thread map: every element of each array coloured by the block and thread that touched it."""

import matplotlib
import numpy as np

from .drawing import blank, cell_of, draw_cells, grid_shape, index_text, new_view, outline
from .recording import dim3, linear, record
from .widgets import explorer, have_widgets, int_slider

BLOCK_COLOURS = matplotlib.colormaps["tab10"]


def owners(recording, array):
    """For each element of `array`: (block, thread) linear numbers of the thread that wrote it last
    (else read it first), and how many distinct threads touched it. Untouched elements have -1."""
    shape = recording.arrays[array].shape
    owner_block = np.full(shape, -1)
    owner_thread = np.full(shape, -1)
    written = np.zeros(shape, dtype=bool)
    touched_by = {}
    for a in recording.trace:
        if a.array != array:
            continue
        b, t = linear(a.block, recording.grid), linear(a.thread, recording.block)
        touched_by.setdefault(a.index, set()).add((b, t))
        if a.kind != "read" or not written[a.index] and owner_block[a.index] < 0:
            owner_block[a.index], owner_thread[a.index] = b, t
            written[a.index] |= a.kind != "read"
    counts = np.zeros(shape, dtype=int)
    for index, threads in touched_by.items():
        counts[index] = len(threads)
    return owner_block, owner_thread, counts


def touched(recording, block, thread=None):
    """{array: {index: "read" | "write" | "read+write"}} for one thread (or all of one block)."""
    cells = {}
    for a in recording.accesses(block=block, thread=thread):
        kinds = cells.setdefault(a.array, {})
        kind = "write" if a.kind != "read" else "read"
        old = kinds.get(a.index)
        kinds[a.index] = kind if old in (None, kind) else "read+write"
    return cells


def _colours(recording, array, owner_block, owner_thread):
    info = recording.arrays[array]
    colours = blank(info.shape)
    shade = np.linspace(0.45, 1.0, recording.threads_per_block)
    for index in zip(*np.nonzero(owner_block >= 0), strict=True):
        index = index if len(index) > 1 else index[0]
        r, g, b, _ = BLOCK_COLOURS(owner_block[index] % 10)
        alpha = shade[owner_thread[index]]
        colours[cell_of(index, info.shape)] = (*(1 - alpha + alpha * np.array((r, g, b))), 1)
    return colours


def _caption(recording, block, thread, cells):
    who = f"block {block}" + ("" if thread is None else f", thread {thread}")
    parts = []
    for kind in ("read", "write", "read+write"):
        items = [index_text(name, i) for name, kinds in cells.items()
                 for i, k in sorted(kinds.items()) if k == kind]
        if items:
            verb = {"read": "reads", "write": "writes", "read+write": "reads and writes"}[kind]
            parts.append(f"{verb} {', '.join(items)}")
    return f"{who}: {'; '.join(parts) if parts else 'touches nothing'}"


def thread_map(kernel, grid=None, block=None, args=(), *, block_id=None, thread=None, arrays=None,
               shared_bytes=0):
    """Draw each array a launch touched, every element coloured by its block (hue) and thread (shade;
    the number in the cell is the thread's number in its block, `+` when several threads touched it).
    With `block_id` and/or `thread` (ints or (x, y) tuples), that thread's elements get a red border.
    `kernel` may be a kernel (run once with copies of `args`) or a gpusim.viz.record(...) Recording."""
    rec = record(kernel, grid, block, args, shared_bytes)
    names = arrays or [n for n in rec.arrays
                       if len(rec.arrays[n].shape) <= 2 and any(a.array == n for a in rec.trace)]
    chosen_block = chosen_thread = cells = None
    if block_id is not None or thread is not None:
        chosen_block = dim3(0 if block_id is None else block_id, rec.grid)
        chosen_thread = None if thread is None else dim3(thread, rec.block)
        cells = touched(rec, chosen_block, chosen_thread)
    sizes = [grid_shape(rec.arrays[n].shape) for n in names]
    width = min(14, 1.5 + sum(0.3 * c + 0.6 for _, c in sizes))
    height = min(9, 1.6 + 0.3 * max((r for r, _ in sizes), default=1))
    view = new_view(width, height)
    axes = view.subplots(1, max(len(names), 1), squeeze=False)[0]
    for ax, name in zip(axes, names, strict=False):
        info = rec.arrays[name]
        owner_block, owner_thread, counts = owners(rec, name)
        labels = np.full(grid_shape(info.shape), "", dtype=object)
        for index in zip(*np.nonzero(owner_block >= 0), strict=True):
            index = index if len(index) > 1 else index[0]
            labels[cell_of(index, info.shape)] = f"{owner_thread[index]}{'+' if counts[index] > 1 else ''}"
        draw_cells(ax, name, info.shape, _colours(rec, name, owner_block, owner_thread), labels,
                   f"{name} {info.shape} ({info.space})")
        if cells is not None:
            outline(ax, [cell_of(i, info.shape) for i in cells.get(name, {})])
    view.suptitle(f"{rec.name}[grid={rec.grid[:2]}, block={rec.block[:2]}]: colour = block, number = thread",
                  fontsize=10)
    view.facts["highlighted"] = {n: sorted(cells.get(n, {})) for n in names} if cells is not None else {}
    if cells is not None:
        view.facts["caption"] = _caption(rec, chosen_block[:2], chosen_thread and chosen_thread[:2], cells)
    if rec.error is not None:
        view.facts["error"] = str(rec.error).splitlines()[0]
    return view


def thread_map_widget(kernel, grid=None, block=None, args=(), *, arrays=None, shared_bytes=0):
    """Thread map with two sliders, block and thread (numbered x fastest, as CUDA does); the chosen
    thread's elements get a red border and are listed under the picture. Static without ipywidgets."""
    rec = record(kernel, grid, block, args, shared_bytes)
    if not have_widgets():
        return thread_map(rec, block_id=0, thread=0, arrays=arrays)
    controls = {
        "block_id": int_slider("block", rec.block_count - 1),
        "thread": int_slider("thread", rec.threads_per_block - 1),
    }

    def render(block_id, thread):
        return thread_map(rec, block_id=block_id, thread=thread, arrays=arrays)

    return explorer(render, controls, "gpusim-thread-map")
