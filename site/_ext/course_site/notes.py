"""A note under each page's title: where its outputs come from, in one line, and how to run it yourself.

A lesson's mode and device are read from its own output (the line `from utils import *` prints), and the date
and run time from myst-nb's execution record, so the note cannot claim what the page does not show. GPU
figures inside a lesson carry their own device and date, as the lessons print them from bench/results.
"""

import re
from datetime import datetime, timezone

from docutils import nodes
from myst_nb.sphinx_ import NbMetadataCollector

MODE_LINE = re.compile(r"utils: (CPU|GPU) mode: .*?"
                       r"(?:on this CPU \((?P<cpu>[^()]*)\)|run on (?P<gpu>[^\n]*)\.)")
LAB_URL = "http://localhost:8888/lab/tree/{path}"
DOCUMENTS = {"gpusim/README": "gpusim/README.md", "gpusim/CHANGELOG": "gpusim/CHANGELOG.md",
             "site/grading": "README.md (For instructors)", "site/index": "site/index.md"}


def _paragraph(*parts) -> nodes.paragraph:
    paragraph = nodes.paragraph()
    for part in parts:
        paragraph += part if isinstance(part, nodes.Node) else nodes.Text(part)
    return paragraph


def _link(text: str, url: str) -> nodes.reference:
    return nodes.reference(text, text, refuri=url)


def _literal(text: str) -> nodes.literal:
    return nodes.literal(text, text)


def _mode_of(doctree):
    """('CPU', device) from the first output that names the mode, or None."""
    for block in doctree.findall(nodes.literal_block):
        found = MODE_LINE.search(block.astext())
        if found:
            return found.group(1), found.group("cpu") or found.group("gpu")
    return None


def lesson_note(doctree, docname, exec_data):
    if exec_data is None and not _mode_of(doctree):
        return [_paragraph("Outputs: none; this build of the site did not run the lessons.")]
    mode = _mode_of(doctree)
    if exec_data is None or not exec_data.get("succeeded") or mode is None:
        raise RuntimeError(f"{docname}: no execution record or no mode line; a lesson page needs both")
    when = datetime.fromtimestamp(exec_data["mtime"], tz=timezone.utc).strftime("%Y-%m-%d")
    return [_paragraph(f"Outputs: {mode[0]} mode, on {mode[1]}, run by ", _literal("make site"),
                       f" on {when} in {exec_data['runtime']:.0f} s. Figures measured on a GPU are recorded "
                       "results from bench/results/, each labelled with its GPU and date.")]


def exercise_note():
    return [_paragraph("Outputs: none. This is the exercise as you get it: the tasks and their checks, "
                       "without the solutions. Your code goes in the cells marked ",
                       _literal("# YOUR CODE HERE"), "; run it in JupyterLab, as below.")]


def run_it_yourself(path):
    return _paragraph(_link("Open in JupyterLab", LAB_URL.format(path=path)), " once ",
                      _literal("make lab"), " runs in your clone of the course (or download this notebook "
                      "with the button above and see the start page's note on running a notebook alone). "
                      "On a machine with an NVIDIA GPU the same cells run in GPU mode and measure it; ",
                      _literal("COURSE_MODE=cpu"), " keeps the simulators.")


def document_note(docname):
    return [_paragraph(f"Outputs: none; this page is {DOCUMENTS[docname]} from the repository.")]


def note_for(app, doctree, docname):
    source = app.env.doc2path(docname, base=False)
    if docname.startswith("notebooks/"):
        exec_data = NbMetadataCollector.get_exec_data(app.env, docname)
        return lesson_note(doctree, docname, exec_data) + [run_it_yourself(source)]
    if docname.startswith("exercises/"):
        return exercise_note() + [run_it_yourself(source)]
    if docname in DOCUMENTS:
        return document_note(docname)
    return []


def add_note(app, doctree):
    paragraphs = note_for(app, doctree, app.env.docname)
    section = next(iter(doctree.findall(nodes.section)), None)
    if not paragraphs or section is None:
        return
    note = nodes.container(classes=["course-page-note"])
    note.extend(paragraphs)
    title = next(iter(section.findall(nodes.title)))
    section.insert(section.index(title) + 1, note)


def setup(app):
    app.connect("doctree-read", add_note)
