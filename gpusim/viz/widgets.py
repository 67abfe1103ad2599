"""ipywidgets wrappers: sliders that redraw a static view. Without ipywidgets, the static view is returned."""

import base64
import html


def have_widgets():
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def explorer(render, controls, css_class="gpusim-viz"):
    """A VBox of `controls` (name -> ipywidgets control), the picture `render(**values)` draws (a View)
    and a line of text under it. The text sits in an element of class `css_class`-facts whose
    `data-facts` attribute repeats it (the browser test reads it). Callers check have_widgets() first."""
    import ipywidgets as widgets

    image = widgets.Image(format="png")
    caption = widgets.HTML()

    def redraw(_change=None):
        view = render(**{name: control.value for name, control in controls.items()})
        image.value = view.png()
        text = view.facts.get("caption", "")
        escaped = html.escape(text, quote=True)
        caption.value = f'<div class="{css_class}-facts" data-facts="{escaped}">{escaped}</div>'

    for control in controls.values():
        control.observe(redraw, names="value")
    redraw()
    box = _explorer_box_class(widgets)([widgets.HBox(list(controls.values())), image, caption])
    box.add_class(css_class)
    box.redraw = redraw
    box.image, box.caption, box.controls = image, caption, controls
    return box


def int_slider(description, maximum, value=0):
    import ipywidgets as widgets

    return widgets.IntSlider(value=value, min=0, max=max(maximum, 0), description=description,
                             continuous_update=False, style={"description_width": "initial"})


def _explorer_box_class(widgets):
    class ExplorerBox(widgets.VBox):
        """A VBox whose output also carries the current picture as image/png, so front-ends that do not
        run widgets (nbconvert to HTML, GitHub's preview) still show the figure."""

        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            if bundle is not None and self.image.value:
                bundle["image/png"] = base64.b64encode(bytes(self.image.value)).decode("ascii")
            return bundle

    return ExplorerBox
