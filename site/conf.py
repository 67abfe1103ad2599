"""Sphinx configuration of the course's website: `make site` builds it into site/_build/html.

The source folder is the repository itself, so every page keeps its repository path (notebooks/01_....html);
`include_patterns` names the pages. Lessons are executed in CPU mode through myst-nb's cache, keyed also by
the course code they import (course_site.cache); exercises are shown as learners get them, unexecuted.
Nothing is fetched at build time or when a page is read: MathJax comes from an installed PyPI package.
"""

import os
import sys
from pathlib import Path

SITE = Path(__file__).resolve().parent
ROOT = SITE.parent
sys.path.insert(0, str(SITE / "_ext"))

import course_site  # noqa: E402  (needs the path above)

os.environ["COURSE_MODE"] = "cpu"  # the lessons' outputs come from CPU mode, whatever machine builds the site
os.environ.pop("NUMBA_ENABLE_CUDASIM", None)  # utils sets it from COURSE_MODE, as for a learner
os.environ.pop("MPLBACKEND", None)  # figures go through the notebook's inline backend, into the page

project = "GPU programming from first principles, in Python"
author = "the course's authors"
copyright = "the course's authors"
root_doc = "site/index"
extensions = ["myst_nb", "course_site"]
include_patterns = ["site/*.md", "notebooks/*.ipynb", "exercises/*.ipynb", "gpusim/README.md",
                    "gpusim/CHANGELOG.md"]
exclude_patterns = ["site/_build", ".venv*", ".git", "**/.ipynb_checkpoints"]
suppress_warnings = ["myst.header"]  # the grading guide is a README section that starts at level 3

myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

nb_execution_mode = "cache"
nb_execution_cache_path = str(course_site.cache.cache_path(SITE / "_build" / ".jupyter_cache", ROOT))
nb_execution_excludepatterns = ["exercises/*"]  # learners' copies: running them would only fail their checks
nb_execution_timeout = 180  # seconds per cell, as tests/notebook_runs.py allows
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_ipywidgets_js = {}  # no widget runtime from a CDN: explorers show the picture they carry as image/png
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]

html_theme = "sphinx_book_theme"
html_title = "GPU programming from first principles"
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"  # chromium would otherwise ask for /favicon.ico and log a 404
html_context = {"default_mode": "light"}  # pydata-sphinx-theme logs an error on an empty mode
html_css_files = ["course.css"]
html_theme_options = {
    "use_download_button": True,  # each notebook page offers its .ipynb: see "Notebooks on their own"
    "show_navbar_depth": 1,
    "home_page_in_toc": True,
    "navigation_with_keys": False,
}
html_show_sourcelink = False
html_last_updated_fmt = None
