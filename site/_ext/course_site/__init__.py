"""The course's Sphinx extension: a note on each page saying where its outputs come from, with links to run
it, and the offline assets (MathJax from an installed package, a root page that leads to the start page)."""

from . import assets, cache, notes

__all__ = ["assets", "cache", "notes"]


def setup(app):
    cache.setup(app)
    notes.setup(app)
    assets.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
