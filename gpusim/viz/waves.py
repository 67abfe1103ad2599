"""Tile and wave view: a matmul's output cut into tiles, each SM taking one tile at a time, so the
tiles run in waves of (number of SMs); a last wave that is barely filled leaves most SMs idle."""

import math

import numpy as np

from .drawing import new_view
from .widgets import explorer, have_widgets

A100_SMS = 108


def wave_plan(m, n, tile=(128, 128), sms=A100_SMS):
    """Tile counts and waves for an m x n output with tiles of tile[0] x tile[1] rows x columns, one tile
    per SM at a time: tiles, waves, the tiles of the last wave and its use of the SMs (0-1), and the
    fraction of computed tile area that is real output (edge tiles stick out past the matrix)."""
    rows, cols = math.ceil(m / tile[0]), math.ceil(n / tile[1])
    tiles = rows * cols
    waves = math.ceil(tiles / sms)
    last = tiles - (waves - 1) * sms
    return dict(tile_rows=rows, tile_cols=cols, tiles=tiles, waves=waves, last_wave_tiles=last,
                last_wave_utilization=last / sms, tile_utilization=m * n / (tiles * tile[0] * tile[1]))


def wave_view(m, n, tile=(128, 128), sms=A100_SMS):
    """Draw the output matrix cut into tiles, each coloured by the wave it runs in (tile numbers run
    row by row, as blockIdx does); the dashed line is the edge of the matrix itself."""
    plan = wave_plan(m, n, tile, sms)
    rows, cols = plan["tile_rows"], plan["tile_cols"]
    wave_of_tile = (np.arange(rows * cols) // sms).reshape(rows, cols)
    view = new_view(min(10, 2.5 + 0.35 * cols), min(8, 1.8 + 0.35 * rows))
    ax = view.add_subplot()
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
    for (r, c), wave in np.ndenumerate(wave_of_tile):
        y0, x0 = r * tile[0], c * tile[1]
        ax.add_patch(_rect(x0, y0, tile[1], tile[0], colours[wave % len(colours)], wave))
    ax.add_patch(_outline(m, n))
    ax.set_xlim(0, cols * tile[1])
    ax.set_ylim(rows * tile[0], 0)
    ax.set_aspect("equal")
    ax.set_xlabel("output column")
    ax.set_ylabel("output row")
    last = plan["last_wave_utilization"]
    ax.set_title(f"C = A @ B, {m} x {n}, tiles {tile[0]} x {tile[1]}, {sms} SMs:\n"
                 f"{plan['tiles']} tiles = {plan['waves']} wave(s); "
                 f"the last wave has {plan['last_wave_tiles']} tiles ({last:.0%} of the SMs busy)",
                 fontsize=9)
    handles = [_rect(0, 0, 1, 1, colours[w % len(colours)], w) for w in range(min(plan["waves"], 6))]
    ax.legend(handles, [f"wave {w + 1}" for w in range(len(handles))], loc="upper left",
              bbox_to_anchor=(1.01, 1), fontsize=8)
    view.facts.update(plan)
    waves = f"{plan['waves']} wave" + ("s" if plan["waves"] != 1 else "")
    view.facts["caption"] = f"{plan['tiles']} tiles, {waves}, last wave {last:.0%} full"
    return view


def _rect(x, y, w, h, colour, wave):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, facecolor=colour, edgecolor="white", linewidth=0.8, gid=f"wave{wave}")


def _outline(m, n):
    from matplotlib.patches import Rectangle

    return Rectangle((0, 0), n, m, fill=False, edgecolor="black", linewidth=1.5, linestyle="--")


def wave_view_widget(m=1792, n=1792, tile=(256, 128), sms=A100_SMS):
    """The wave view with sliders for the matrix size and the SM count. Static without ipywidgets."""
    if not have_widgets():
        return wave_view(m, n, tile, sms)
    import ipywidgets as widgets

    def slider(name, value, low, high, step):
        return widgets.IntSlider(value=value, min=low, max=high, step=step, description=name,
                                 continuous_update=False)

    controls = {"m": slider("rows m", m, 64, 4096, 1), "n": slider("cols n", n, 64, 4096, 1),
                "sms": slider("SMs", sms, 1, 160, 1)}
    return explorer(lambda m, n, sms: wave_view(m, n, tile, sms), controls, "gpusim-waves")
