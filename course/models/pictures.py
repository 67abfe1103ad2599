"""Pictures of the course models: a systolic array clock by clock (a stepper with a slider, or a strip of
cycles), and pipeline timelines (Gantt charts). Each returns a `Picture`, a matplotlib figure that a notebook
shows as a PNG even where pyplot was never imported; `facts` holds what it shows, for tests and captions."""

import base64
import io

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrow, Rectangle

from . import systolic

BUSY, IDLE, HAS_SUM = "#f4a259", "#eeeeee", "#cfe2f3"
STAGE_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d", "#72b7b2", "#e45756", "#bab0ac")


class Picture(Figure):
    """A figure that displays itself as a PNG; `facts` says what it shows."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.facts = {}

    def png(self, dpi=90):
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        return buffer.getvalue()

    def _repr_png_(self):
        return self.png()


def _number(value):
    return f"{value:.3g}" if abs(value) >= 1e-12 else "0"


# ----------------------------------------------------------------------------------------- systolic array


def draw_cycle(ax, state, weights, m_count):
    """One cycle of a pass on `ax`: each PE shows its weight, the activation it holds and the partial sum it
    computed (orange: a useful multiply-add this cycle); values entering on the left, sums leaving below."""
    rows, cols = weights.shape
    centred = dict(ha="center", va="center")
    for i in range(rows):
        for j in range(cols):
            colour = BUSY if state.busy[i, j] else (HAS_SUM if state.s[i, j] else IDLE)
            ax.add_patch(Rectangle((j, -i - 1), 0.9, 0.9, facecolor=colour, edgecolor="grey", gid="pe"))
            ax.text(j + 0.45, -i - 0.22, f"w={_number(weights[i, j])}", fontsize=7, color="grey", **centred)
            if state.busy[i, j] or state.a[i, j]:
                ax.text(j + 0.45, -i - 0.48, f"a={_number(state.a[i, j])}", fontsize=8, **centred)
            if state.busy[i, j] or state.s[i, j]:
                ax.text(j + 0.45, -i - 0.74, f"s={_number(state.s[i, j])}", fontsize=8, fontweight="bold",
                        **centred)
    for i in range(rows):
        ax.add_patch(FancyArrow(-0.55, -i - 0.55, 0.45, 0, width=0.02, head_width=0.12, color="grey"))
        ax.text(-0.62, -i - 0.55, _number(state.x_left[i]), ha="right", va="center", fontsize=8)
    for m, sums in state.out.items():
        for j, value in sums.items():
            ax.text(j + 0.45, -rows - 0.3, f"y[{m},{j}]\n={_number(value)}", ha="center", va="top",
                    fontsize=7, color="#b00000")
    ax.set_xlim(-1.6, cols + 0.2)
    ax.set_ylim(-rows - 1.1, 0.3)
    ax.set_aspect("equal")
    ax.axis("off")
    useful = int(state.busy.sum())
    ax.set_title(f"cycle {state.cycle}: {useful} of {rows * cols} PEs busy", fontsize=9)
    return useful


def systolic_cycle(X, W, cycle):
    """A picture of the array (exactly the size of W) in one cycle of the pass that streams the rows of X."""
    X, W = np.asarray(X, dtype=np.float64), np.asarray(W, dtype=np.float64)
    states = systolic.trace(X, W)
    picture = Picture(figsize=(1.2 * W.shape[1] + 2, 1.2 * W.shape[0] + 1.4), layout="constrained")
    ax = picture.subplots()
    useful = draw_cycle(ax, states[cycle], W, X.shape[0])
    picture.facts.update(cycle=cycle, cycles=len(states), busy=useful,
                         caption=f"cycle {cycle} of {len(states)}: {useful} useful multiply-adds")
    return picture


def systolic_strip(X, W, cycles=None):
    """Several cycles of one pass side by side (all of them by default, up to 8)."""
    X, W = np.asarray(X, dtype=np.float64), np.asarray(W, dtype=np.float64)
    states = systolic.trace(X, W)
    chosen = list(range(len(states)))[:8] if cycles is None else list(cycles)
    rows, cols = W.shape
    width = min(3.2 * len(chosen), 22)
    panel = width / len(chosen)
    picture = Picture(figsize=(width, panel * (rows + 1.4) / (cols + 1.8) + 0.7), layout="constrained")
    axes = np.atleast_1d(picture.subplots(1, len(chosen)))
    busy = [draw_cycle(ax, states[c], W, X.shape[0]) for ax, c in zip(axes, chosen, strict=True)]
    picture.suptitle(f"{X.shape[0]} vector(s) through a {rows}x{cols} weight-stationary array: "
                     f"{len(states)} cycles; orange = a useful multiply-add", fontsize=10)
    picture.facts.update(cycles=len(states), busy=dict(zip(chosen, busy, strict=True)))
    return picture


def systolic_stepper(X, W):
    """`systolic_cycle` with a cycle slider (ipywidgets); without ipywidgets, the strip of all cycles."""
    try:
        import ipywidgets as widgets
    except ImportError:
        return systolic_strip(X, W)
    count = systolic.pass_cycles(np.shape(X)[0], *np.shape(W))
    slider = widgets.IntSlider(value=0, min=0, max=count - 1, description="cycle", continuous_update=False)
    image = widgets.Image(format="png")
    caption = widgets.HTML()

    def redraw(_change=None):
        picture = systolic_cycle(X, W, slider.value)
        image.value = picture.png()
        caption.value = picture.facts["caption"]

    slider.observe(redraw, names="value")
    redraw()
    return _with_png(widgets, [slider, image, caption], image)


def _with_png(widgets, children, image):
    """A VBox that also carries its current picture as image/png, for front-ends that do not run widgets."""

    class Stepper(widgets.VBox):
        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            if bundle is not None and image.value:
                bundle["image/png"] = base64.b64encode(bytes(image.value)).decode("ascii")
            return bundle

    return Stepper(children)


# --------------------------------------------------------------------------------------------- timelines


def gantt(ax, events, title="", unit="µs"):
    """Draw pipeline events (course.models.pipeline.Event) as a timeline: one row per stage, one bar per
    tile labelled with its number, loads coloured by the buffer they fill."""
    stages = list(dict.fromkeys(e.stage for e in events))
    for e in events:
        row = stages.index(e.stage)
        colour = STAGE_COLOURS[e.buffer % len(STAGE_COLOURS)] if e.buffer is not None else "#c7c7c7"
        ax.add_patch(Rectangle((e.start, row - 0.38), e.end - e.start, 0.76, facecolor=colour,
                               edgecolor="white", linewidth=0.8, gid=f"{e.stage}-{e.tile}"))
        if e.end - e.start > 0:
            ax.text((e.start + e.end) / 2, row, str(e.tile), ha="center", va="center", fontsize=7)
    end = max(e.end for e in events)
    ax.set_xlim(0, end * 1.02)
    ax.set_ylim(len(stages) - 0.5, -0.5)
    ax.set_yticks(range(len(stages)), stages)
    ax.set_xlabel(f"time ({unit})")
    ax.set_title(f"{title}: done at {end:.3g} {unit}" if title else f"done at {end:.3g} {unit}", fontsize=9)
    return end


def timelines(rows, unit="µs"):
    """Timelines one above the other, on one time axis: `rows` is a list of (title, events)."""
    picture = Picture(figsize=(11, 1.6 * len(rows) + 0.6), layout="constrained")
    axes = np.atleast_1d(picture.subplots(len(rows), 1, sharex=True))
    ends = {title: gantt(ax, events, title, unit) for ax, (title, events) in zip(axes, rows, strict=True)}
    axes[0].set_xlim(0, max(ends.values()) * 1.02)
    for ax in axes[:-1]:
        ax.set_xlabel("")
    picture.supxlabel("bars: tiles (numbered), coloured by the buffer each fills (grey: none)", fontsize=8)
    picture.facts.update(ends=ends)
    return picture
