"""Phase stepper: one block of a shared-memory kernel, barrier by barrier: which elements each phase
read and wrote, what the shared arrays hold at the end of the phase, and the elements of a race in red."""

import textwrap

import numpy as np

from .drawing import EMPTY, blank, cell_of, draw_cells, grid_shape, index_text, new_view, outline
from .recording import dim3, linear, record
from .widgets import explorer, have_widgets, int_slider

READ, WRITE, BOTH = (0.55, 0.75, 0.95, 1.0), (1.0, 0.72, 0.40, 1.0), (0.75, 0.60, 0.90, 1.0)
RACE = (0.84, 0.15, 0.16, 1.0)
LEGEND = {"read": READ, "written": WRITE, "read and written": BOTH, "race": RACE, "untouched": EMPTY}


def phase_accesses(recording, block_id=0):
    """{epoch: {array: {index: (readers, writers)}}} for one block; readers and writers are sets of
    linear thread numbers. Epoch k is the phase between the k-th and (k+1)-th barrier."""
    block = dim3(block_id, recording.grid)
    phases = {}
    for a in recording.accesses(block=block):
        cell = phases.setdefault(a.epoch, {}).setdefault(a.array, {}).setdefault(a.index, (set(), set()))
        cell[0 if a.kind == "read" else 1].add(linear(a.thread, recording.block))
    return phases


def races(cells):
    """Indices of elements one thread wrote and another thread touched in the same phase."""
    return sorted(i for i, (readers, writers) in cells.items() if writers and len(readers | writers) > 1)


def _phase_colours(shape, cells, racy):
    colours = blank(shape)
    for index, (readers, writers) in cells.items():
        colours[cell_of(index, shape)] = BOTH if readers and writers else WRITE if writers else READ
    for index in racy:
        colours[cell_of(index, shape)] = RACE
    return colours


def _value_labels(shape, values):
    """The values of an array as strings laid out like its cells (None when they were not recorded)."""
    if values is None or values.shape != tuple(shape):
        return None
    labels = np.full(grid_shape(shape), "", dtype=object)
    for index in np.ndindex(values.shape):
        labels[cell_of(index if len(index) > 1 else index[0], shape)] = f"{values[index]:.3g}"
    return labels


def phase_stepper(kernel, grid=None, block=None, args=(), *, block_id=0, phase=None, arrays=None,
                  shared_bytes=0):
    """Draw, for one block, each phase (the code between two barriers) as a row and each array as a
    column: blue = read, orange = written, purple = both, red = a race (one thread wrote an element
    that another thread read or wrote in the same phase); shared cells show their values at the end of the
    phase. `phase` draws just that one phase.
    `arrays` defaults to the shared arrays (all arrays when the kernel has none)."""
    rec = record(kernel, grid, block, args, shared_bytes)
    phases = phase_accesses(rec, block_id)
    drawable = [n for n, info in rec.arrays.items() if len(info.shape) <= 2]
    shared = [n for n in drawable if rec.arrays[n].space == "shared"]
    names = arrays or shared or [n for n in drawable if any(n in p for p in phases.values())]
    numbers = sorted(phases) if phase is None else [phase]
    if phase is not None and phase not in phases and phases:
        raise ValueError(f"block {block_id} has phases {sorted(phases)}, not {phase}.")
    widths = [grid_shape(rec.arrays[n].shape)[1] for n in names]
    heights = [grid_shape(rec.arrays[n].shape)[0] for n in names]
    view = new_view(min(14, 1.5 + sum(0.3 * w + 0.5 for w in widths)),
                    min(12, 0.8 + len(numbers) * (0.7 + 0.3 * max(heights, default=1))))
    axes = view.subplots(max(len(numbers), 1), max(len(names), 1), squeeze=False)
    found, lines = {}, []
    for row, number in enumerate(numbers):
        for col, name in enumerate(names):
            shape = rec.arrays[name].shape
            cells = phases.get(number, {}).get(name, {})
            racy = races(cells)
            if racy:
                found.setdefault(number, {})[name] = racy
            values = rec.shared_values(dim3(block_id, rec.grid), number).get(name)
            draw_cells(axes[row, col], name, shape, _phase_colours(shape, cells, racy),
                       _value_labels(shape, values), title=f"phase {number}: {name}")
            outline(axes[row, col], [cell_of(i, shape) for i in racy], colour="black", gid="race")
        counts = {n: phases.get(number, {}).get(n, {}) for n in names}
        reads = sum(len(r) for c in counts.values() for r, _ in c.values())
        writes = sum(len(w) for c in counts.values() for _, w in c.values())
        lines.append(f"phase {number}: {reads} thread-reads, {writes} thread-writes")
    title = f"{rec.name}, block {dim3(block_id, rec.grid)[:2]}: phases between barriers"
    if rec.error is not None:
        title += "\n" + textwrap.fill(f"{type(rec.error).__name__}: {str(rec.error).splitlines()[0]}", 100)
    view.suptitle(title, fontsize=10, color="black" if rec.error is None else "#b00000")
    view.supxlabel("blue read · orange written · purple both · red race · grey untouched", fontsize=8)
    view.facts.update(phases=sorted(phases), races=found,
                      caption="; ".join(lines) + ("; races at " + ", ".join(
                          index_text(n, i) for p in found.values() for n, ix in p.items() for i in ix)
                          if found else ""))
    if rec.error is not None:
        view.facts["error"] = str(rec.error)
    return view


def phase_stepper_widget(kernel, grid=None, block=None, args=(), *, arrays=None, shared_bytes=0):
    """The phase stepper with a block slider and a phase slider. Static (all phases) without ipywidgets."""
    rec = record(kernel, grid, block, args, shared_bytes)
    if not have_widgets():
        return phase_stepper(rec, arrays=arrays)
    last_phase = max((a.epoch for a in rec.trace), default=0)
    controls = {"block_id": int_slider("block", rec.block_count - 1),
                "phase": int_slider("phase", last_phase)}

    def render(block_id, phase):
        available = sorted(phase_accesses(rec, block_id))
        return phase_stepper(rec, block_id=block_id, phase=phase if phase in available else None,
                             arrays=arrays)

    return explorer(render, controls, "gpusim-phases")


__all__ = ["phase_accesses", "phase_stepper", "phase_stepper_widget", "races"]
