"""A wrong output drawn next to the expected one: wrong elements in red and outlined, never-written ones grey
and crossed. Small arrays show their numbers (a flat array wrapped so that no two numbers overlap); large ones
and images are drawn as pictures with a shared colour scale."""

import numpy as np

from .drawing import HIGHLIGHT, new_view, outline

RIGHT, WRONG, UNWRITTEN = (0.56, 0.82, 0.56, 1.0), (0.84, 0.15, 0.16, 1.0), (0.75, 0.75, 0.75, 1.0)
LABEL_COLUMNS = 12  # a flat array with numbers is wrapped in rows of 12 elements: the numbers never overlap
MAX_LABELLED = (16, 12)  # (rows, columns): larger grids are drawn as pictures, without numbers
MAX_OUTLINED = 256  # beyond this many, wrong elements are shown by their colour alone


def _values(array):
    return np.asarray(array.numpy() if hasattr(array, "numpy") else array)


def _as_grid(array, shape, columns):
    """`array` as a 2-D grid: images and 2-D arrays as they are, a flat array wrapped in rows of `columns`,
    padded at the end with NaN (drawn as blank)."""
    if shape is not None:
        return np.asarray(array, float).reshape(shape)
    if array.ndim == 2:
        return np.asarray(array, float)
    flat = np.asarray(array, float).reshape(-1)
    rows = max(1, -(-flat.size // columns))
    grid = np.full(rows * columns, np.nan)
    grid[: flat.size] = flat
    return grid.reshape(rows, columns)


def _position(index, ndim, columns):
    """Where element `index` (a flat index for 1-D outputs) is drawn, as (row, column)."""
    return tuple(int(i) for i in index) if ndim == 2 else divmod(int(index), columns)


def output_diff(actual, expected, written=None, name="out", rtol=1e-5, atol=1e-6, image=None):
    """Draw `expected` and `actual` side by side and mark, in `actual`, wrong elements (red, outlined) and
    elements no thread wrote (`written`, a boolean mask: grey, crossed). `image=(height, width)` draws a flat
    output as the picture it is. facts: the indices of wrong and never-written elements, and a caption."""
    actual, expected = _values(actual), _values(expected)
    if actual.shape != expected.shape:
        raise ValueError(f"{name} has shape {actual.shape}, but the expected output has {expected.shape}.")
    if actual.ndim > 2:
        raise ValueError(f"only 1-D and 2-D outputs can be drawn, not shape {actual.shape}.")
    with np.errstate(invalid="ignore", over="ignore"):
        ok = np.isclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol)
    unwritten = np.zeros(actual.shape, bool) if written is None else ~np.asarray(written, bool)
    wrong = ~ok & ~unwritten
    small = image is None and (actual.ndim == 1 and actual.size <= MAX_LABELLED[0] * LABEL_COLUMNS or
                               actual.ndim == 2 and actual.shape[0] <= MAX_LABELLED[0]
                               and actual.shape[1] <= MAX_LABELLED[1])
    columns = LABEL_COLUMNS if small else min(64, max(8, int(np.ceil(np.sqrt(actual.size)))))
    ndim = 2 if image is not None else actual.ndim
    if image is not None:
        columns = image[1]
    grids = [_as_grid(a, image, columns) for a in (expected, actual)]
    status = np.where(unwritten, 2, np.where(wrong, 1, 0))
    status_grid = _as_grid(status, image, columns)
    rows, cols = status_grid.shape
    view = new_view(min(15, max(8, 3 + (0.55 if small else 0.12) * cols * (2 if small else 3))),
                    min(8, max(2.6, 1.6 + (0.45 if small else 0.12) * rows)))
    panels = view.subplots(1, 2 if small else 3)
    wrong_cells = [_position(i, actual.ndim, columns) for i in _indices(wrong)][:MAX_OUTLINED]
    never_cells = [_position(i, actual.ndim, columns) for i in _indices(unwritten)][:MAX_OUTLINED]
    if small:
        mark = f"your {name}: red wrong, grey never written"
        _labelled(panels[0], grids[0], None, f"expected {name}", ndim, columns, actual.size)
        _labelled(panels[1], grids[1], status_grid, mark, ndim, columns, actual.size)
        marked = panels[1]
    else:
        finite = np.concatenate([g[np.isfinite(g)] for g in grids] + [np.zeros(1)])
        scale = dict(vmin=float(finite.min()), vmax=float(finite.max()), cmap="gray" if image else "viridis")
        for ax, grid, title in zip(panels[:2], grids, (f"expected {name}", f"your {name}"), strict=True):
            shown = ax.imshow(grid, interpolation="nearest", **scale)
            ax.set_title(title, fontsize=9)
            _index_ticks(ax, ndim, columns, rows)
        view.colorbar(shown, ax=list(panels[:2]), shrink=0.8, label=f"value of {name}")
        _status(panels[2], status_grid, f"{name}: green right, red wrong, grey never written")
        _index_ticks(panels[2], ndim, columns, rows)
        marked = panels[2]
    outline(marked, never_cells, colour="black", width=1.5, gid="unwritten")
    outline(marked, wrong_cells, colour=HIGHLIGHT, width=2 if small else 1.2, gid="wrong")
    for r, c in never_cells:
        marked.plot([c - 0.4, c + 0.4], [r - 0.4, r + 0.4], color="black", linewidth=0.8)
    caption = f"{int(wrong.sum())} wrong, {int(unwritten.sum())} never written, of {actual.size}"
    view.facts.update(wrong=[_plain(i) for i in _indices(wrong)],
                      unwritten=[_plain(i) for i in _indices(unwritten)], caption=caption)
    return view


def _indices(mask):
    return [i if len(i) > 1 else i[0] for i in zip(*np.nonzero(mask), strict=True)]


def _index_ticks(ax, ndim, columns, rows):
    """Axis labels in element indices: row and column for 2-D outputs, the first index of each row for 1-D."""
    ax.tick_params(labelsize=7, length=0)
    if ndim == 1:
        step = max(1, rows // 8)
        ax.set_yticks(range(0, rows, step), [str(r * columns) for r in range(0, rows, step)])
        ax.set_xticks(range(0, columns, max(1, columns // 8)))
        ax.set_ylabel("index of the row's first element", fontsize=7)
    else:
        ax.set_xlabel("column", fontsize=7)
        ax.set_ylabel("row", fontsize=7)


def _status(ax, status_grid, title):
    colours = np.empty((*status_grid.shape, 4))
    colours[:] = (1.0, 1.0, 1.0, 0.0)
    for code, colour in enumerate((RIGHT, WRONG, UNWRITTEN)):
        colours[status_grid == code] = colour
    ax.imshow(colours, interpolation="nearest")
    ax.set_title(title, fontsize=9)


def _labelled(ax, grid, status_grid, title, ndim, columns, size):
    """A small grid drawn as cells with their numbers (blank where a wrapped flat array has no element)."""
    rows, cols = grid.shape
    filled = np.arange(grid.size).reshape(grid.shape) < size
    colours = np.empty((rows, cols, 4))
    colours[:] = (0.85, 0.90, 0.97, 1.0)
    if status_grid is not None:
        for code, colour in enumerate((RIGHT, WRONG, UNWRITTEN)):
            colours[status_grid == code] = colour
    colours[~filled] = (1.0, 1.0, 1.0, 0.0)
    ax.imshow(colours, interpolation="nearest", extent=(-0.5, cols - 0.5, rows - 0.5, -0.5))
    ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    _index_ticks(ax, ndim, columns, rows)
    ax.set_title(title, fontsize=9)
    for (r, c), value in np.ndenumerate(grid):
        if filled[r, c]:
            text = "NaN" if np.isnan(value) else f"{value:.3g}"
            ax.text(c, r, text, ha="center", va="center", fontsize=6.5)


def _plain(index):
    return tuple(int(i) for i in index) if isinstance(index, tuple) else int(index)
