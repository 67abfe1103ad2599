"""A wrong output drawn next to the expected one: wrong elements in red, never-written ones crossed."""

import numpy as np

from .drawing import HIGHLIGHT, cell_of, draw_cells, grid_shape, new_view, outline

RIGHT, WRONG, UNWRITTEN = (0.56, 0.82, 0.56, 1.0), (0.84, 0.15, 0.16, 1.0), (0.75, 0.75, 0.75, 1.0)


def _values(array):
    return np.asarray(array.numpy() if hasattr(array, "numpy") else array)


def output_diff(actual, expected, written=None, name="out", rtol=1e-5, atol=1e-6):
    """Draw `expected` and `actual` side by side; in `actual` right elements are green, wrong ones red,
    and elements no thread wrote (`written`, a boolean mask, e.g. Recording.written("out")) grey with
    an x. facts: the indices of wrong and unwritten elements."""
    actual, expected = _values(actual), _values(expected)
    if actual.shape != expected.shape:
        raise ValueError(f"{name} has shape {actual.shape}, but the expected output has {expected.shape}.")
    ok = np.isclose(actual, expected, rtol=rtol, atol=atol)
    unwritten = np.zeros(actual.shape, bool) if written is None else ~np.asarray(written, bool)
    colours = np.empty((*grid_shape(actual.shape), 4))
    plain = np.empty_like(colours)
    plain[:] = (0.85, 0.90, 0.97, 1.0)
    labels, expected_labels = (np.full(grid_shape(actual.shape), "", dtype=object) for _ in range(2))
    for index in np.ndindex(actual.shape):
        key = index if len(index) > 1 else index[0]
        cell = cell_of(key, actual.shape)
        colours[cell] = UNWRITTEN if unwritten[index] else RIGHT if ok[index] else WRONG
        labels[cell] = f"{actual[index]:.3g}"
        expected_labels[cell] = f"{expected[index]:.3g}"
    rows, cols = grid_shape(actual.shape)
    view = new_view(min(14, max(7, 2 + 0.7 * cols)), min(8, 1.5 + 0.5 * rows))
    left, right = view.subplots(1, 2)
    draw_cells(left, name, actual.shape, plain, expected_labels, f"expected {name}")
    draw_cells(right, name, actual.shape, colours, labels,
               f"your {name}: green right, red wrong, grey never written")
    never = [i if len(i) > 1 else i[0] for i in zip(*np.nonzero(unwritten), strict=True)]
    wrong = [i if len(i) > 1 else i[0] for i in zip(*np.nonzero(~ok & ~unwritten), strict=True)]
    outline(right, [cell_of(i, actual.shape) for i in never], colour="black", width=1.5, gid="unwritten")
    outline(right, [cell_of(i, actual.shape) for i in wrong], colour=HIGHLIGHT, width=2, gid="wrong")
    for i in never:
        r, c = cell_of(i, actual.shape)
        right.plot([c - 0.4, c + 0.4], [r - 0.4, r + 0.4], color="black", linewidth=0.8)
    view.facts.update(wrong=[_plain(i) for i in wrong], unwritten=[_plain(i) for i in never],
                      caption=f"{len(wrong)} wrong, {len(never)} never written, of {actual.size}")
    return view


def _plain(index):
    return tuple(int(i) for i in index) if isinstance(index, tuple) else int(index)
