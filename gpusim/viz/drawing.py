"""Shared drawing pieces: a figure that shows itself in notebooks, and arrays drawn as grids of cells."""

import io

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

WRAP = 32  # a long 1-D array is drawn in rows of 32 elements: one warp's worth per row
HIGHLIGHT = "#d62728"
EMPTY = (0.93, 0.93, 0.93, 1.0)


class View(Figure):
    """A matplotlib figure that a notebook displays as a PNG even when pyplot was never imported
    (nbclient, nbconvert, GitHub previews). `facts` holds what the picture shows, for tests and captions."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.facts = {}

    def png(self, dpi=90):
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        return buffer.getvalue()

    def _repr_png_(self):
        return self.png()


def new_view(width, height):
    return View(figsize=(width, height), layout="constrained")


def grid_shape(shape):
    """(rows, columns) of the drawing of an array: 2-D as is, 1-D wrapped in rows of WRAP."""
    if len(shape) == 1:
        n = shape[0]
        return (max(1, -(-n // WRAP)), min(n, WRAP)) if n > WRAP else (1, max(n, 1))
    if len(shape) == 2:
        return shape
    raise ValueError(f"only 1-D and 2-D arrays can be drawn, not shape {shape}.")


def cell_of(index, shape):
    """(row, column) where element `index` is drawn."""
    if len(shape) == 1:
        i = index[0] if isinstance(index, tuple) else index
        return divmod(i, WRAP) if shape[0] > WRAP else (0, i)
    return tuple(index)


def index_text(name, index):
    index = index if isinstance(index, tuple) else (index,)
    return f"{name}[{', '.join(str(i) for i in index)}]"


def draw_cells(ax, name, shape, colours, labels=None, title=None):
    """Draw an array as a grid of cells. `colours` is an RGBA array of the grid's shape (see grid_shape);
    `labels` an optional array of strings of that shape."""
    rows, cols = grid_shape(shape)
    ax.imshow(colours, interpolation="nearest", aspect="equal", extent=(-0.5, cols - 0.5, rows - 0.5, -0.5))
    ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="both", length=0, labelsize=7)
    ax.set_xticks(range(0, cols, max(1, cols // 8)))
    ax.set_yticks(range(0, rows, max(1, rows // 8)))
    if len(shape) == 1 and shape[0] > WRAP:
        ax.set_yticks(range(rows), [str(r * WRAP) for r in range(rows)])
    ax.set_title(title or f"{name} {tuple(shape)}", fontsize=9)
    if labels is not None and rows * cols <= 256:
        for (r, c), text in np.ndenumerate(labels):
            if text:
                ax.text(c, r, text, ha="center", va="center", fontsize=6 if cols > 12 else 7)


def outline(ax, cells, colour=HIGHLIGHT, width=3, gid="highlight"):
    """Draw a thick border around each (row, column) in `cells`; the patches carry `gid` for tests."""
    for r, c in cells:
        ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor=colour, linewidth=width,
                               gid=gid, zorder=3))


def blank(shape):
    rows, cols = grid_shape(shape)
    return np.tile(np.array(EMPTY), (rows, cols, 1))
