"""Offline assets: MathJax copied from the installed sphinx-mathjax-offline package, never a CDN, and an
index.html at the site's root that leads to the start page (the pages keep their repository paths)."""

import importlib.util
from pathlib import Path

from sphinx.util.fileutil import copy_asset

MATHJAX_PACKAGE = "sphinx-mathjax-offline"  # MathJax 3's release files, Apache-2.0, as a PyPI package
MATHJAX_ENTRY = "mathjax/tex-chtml.js"

REDIRECT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta http-equiv="refresh" content="0; url={target}"><link rel="canonical" href="{target}"></head>
<body><p><a href="{target}">{title}</a></p></body></html>
"""


def mathjax_folder() -> Path:
    spec = importlib.util.find_spec(MATHJAX_PACKAGE)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"{MATHJAX_PACKAGE} is not installed: pip install -r requirements-dev.txt")
    return Path(spec.origin).parent / "static" / "mathjax"


def copy_assets(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    copy_asset(str(mathjax_folder()), str(Path(app.outdir) / "_static" / "mathjax"))
    target = app.builder.get_target_uri(app.config.root_doc)
    (Path(app.outdir) / "index.html").write_text(REDIRECT.format(title=app.config.html_title, target=target))


def use_local_mathjax(app, config):
    mathjax_folder()  # fail at once, not after executing every lesson
    config.mathjax_path = MATHJAX_ENTRY


def setup(app):
    app.connect("config-inited", use_local_mathjax)
    app.connect("build-finished", copy_assets)
