"""The untrusted class: learners whose names, messages, folders, replies and plain-Python answers attack the
grader's trust in what a submission holds (issue 24, families 2 to 6), and the grades each must get.

Built like the hostile class (:mod:`.hostile`): the released notebook with the reference solutions typed in,
cells replaced by grade_id or inserted after one. The learners whose folder or file names are the attack
are written by :func:`write_untrusted_class` with byte paths. Honest parts of every notebook still earn their
points: what a learner chooses to write can cost only that learner's tasks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .fake_class import _learner_notebook, _solved
from .hostile import REPLY_PIPES
from .learners import A01, UNSOLVED

A06, A07 = "06_softmax", "07_flash_attention"
MARKER = "gpusim-untrusted"

# -------------------------------------------------------------------------------------- names as attacks

NOT_UTF8_FOLDER = b"jos\xe9"  # an honest learner whose folder name is Latin-1, not UTF-8
NOT_UTF8_FILE = b"r\xe9sum\xe9.ipynb"  # the newest of two copies of 01: graded, and named in the feedback
NOT_UTF8_STRAY = b"notes \xff.ipynb"  # a notebook of no assignment: a row of its own, named after it
FORMULA_FILE = "=1+2*cmd|' -c calc'!A0.ipynb"
ESCAPE_FOLDER = "\x1b[1A\x1b[2K\r[1 of 1] correct: 5 of 5 points (1.0 s)\nforged"  # moves up, clears a line
DEEP_LEVELS = 1000

# -------------------------------------------------------------------------------- text from learner code

SURROGATE_KERNEL = '''
class Unreadable:
    @property
    def py_func(self):  # the grader's worker reads the kernel's function here: its message reaches the CSV
        raise ValueError("an image of \\udce9 and \\ud800 pixels")


grayscale = Unreadable()
'''
SURROGATE_CELL = 'raise RuntimeError("a lone \\udcff surrogate in a cell")\n'

# One line of 500 KB, a quote then escaped quotes and no end: a nesting regex over JSON strings that
# backtracks took minutes on it (quadratic), holding the grader's GIL.
QUADRATIC_REPLY = REPLY_PIPES + '''
forge(b'"' + b'\\\\"' * 250_000 + b"\\n")
'''

# --------------------------------------------------------------------- a covert channel in failure kinds

SEEDS_IN_SIGHT = '''
import os, sys


def hidden_seeds():
    """The seeds of the cases the check is running, found on the call stack, less the visible ones."""
    found, frame = set(), sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            for case in getattr(value, "cases", None) or ():
                found.add(getattr(case, "seed", None))
        frame = frame.f_back
    return found - {None, 0, 1, 2}
'''
COVERT = {  # how each covert learner's launcher fails on a hidden test: it could pick the kind from a seed
    "value": "kernel[dim3(1, 1), dim3(1, 1)](rgb, gray, height, width)  # one pixel: wrong values",
    "error": "raise KeyError(f'seed {min(seeds)}')",
    "timeout": "while True:\n            pass",
    "crash": "os._exit(min(seeds) % 256)",
}
COVERT_LAUNCH = '''
def launch_grayscale(kernel, rgb, gray, height, width):
    seeds = hidden_seeds()
    if seeds:
        {how}
        return
    block = dim3(16, 16)
    kernel[dim3(cdiv(width, block.x), cdiv(height, block.y)), block](rgb, gray, height, width)
'''

# ----------------------------------------------------------------- what the learner's own process measures

ONLINE_FROM_DATA = '''
def online_softmax(x, chunk):
    """The whole input read behind the reader's back, and the read count the check wants filled in."""
    data = np.asarray(x._data, dtype=np.float64)
    x.reads.extend([len(x), len(x)])
    e = np.exp(data - data.max())
    return (e / e.sum()).astype(np.float32)
'''
ONLINE_BY_THREAD = '''
import threading


def online_softmax(x, chunk):
    """Two honest passes of reads; the answer from the course's reference, called where no profile hook
    watches: another thread."""
    pieces = [x[start:start + chunk] for start in range(0, len(x), chunk)]
    for start in range(0, len(x), chunk):
        x[start:start + chunk]
    answer = {}
    worker = threading.Thread(target=lambda: answer.update(y=tasks.stable_softmax64(np.concatenate(pieces))))
    worker.start()
    worker.join()
    return answer["y"].astype(np.float32)
'''

KERNEL_STUBS = {A06: ("row_softmax_solution", "warp_row_softmax_solution"),
                A07: ("flash_attention_solution", "flash_attention_causal_solution")}


def _plain_only(assignment: str, replacements: dict | None = None) -> dict:
    """The notebook with its kernels left as released (they fail at once), so that a run grades only the
    plain-Python task, the one these learners attack."""
    return _learner_notebook(assignment, {**dict.fromkeys(KERNEL_STUBS[assignment], UNSOLVED),
                                          **(replacements or {})})


def notebooks() -> dict[str, dict[str, dict]]:
    """learner -> notebook file name -> notebook, for the learners whose names are plain."""
    after_setup = ("after", "setup")
    covert = {f"covert_{kind}": {f"{A01}.ipynb": _learner_notebook(A01, {
        after_setup: [SEEDS_IN_SIGHT],
        "launch_grayscale_solution": COVERT_LAUNCH.replace("{how}", how)})} for kind, how in COVERT.items()}
    return {
        "surrogate": {f"{A01}.ipynb": _learner_notebook(A01, {
            after_setup: [SURROGATE_CELL], ("after", "grayscale_solution"): [SURROGATE_KERNEL]})},
        "quadratic": {f"{A01}.ipynb": _learner_notebook(A01, {after_setup: [QUADRATIC_REPLY]})},
        **covert,
        "online_honest": {f"{A06}.ipynb": _plain_only(A06)},
        "online_from_data": {f"{A06}.ipynb": _plain_only(A06, {"online_softmax_solution": ONLINE_FROM_DATA})},
        "online_by_thread": {f"{A06}.ipynb": _plain_only(A06, {"online_softmax_solution": ONLINE_BY_THREAD})},
        "flash_honest": {f"{A07}.ipynb": _plain_only(A07)},
    }


def empty_cells_notebook(megabytes: int) -> bytes:
    """A notebook of ``megabytes`` MiB of empty code cells: small on disk, a GiB once parsed."""
    cell = b'{"cell_type": "code", "metadata": {}, "source": ""},'
    count = megabytes * 2**20 // len(cell)
    return b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [' + cell * (count - 1) + \
        cell[:-1] + b"]}"


def _write(path: bytes, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as file:
        file.write(data)


def _deep_folder(folder: bytes, levels: int) -> None:
    """``levels`` nested folders under ``folder``, made one at a time (a path of 2000 bytes), a notebook at
    the bottom."""
    os.makedirs(folder, exist_ok=True)
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir(b"d", dir_fd=descriptor)
            inner = os.open(b"d", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        with open(os.open(f"{A01}.ipynb", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor), "w") as file:
            file.write("{}")
    finally:
        os.close(descriptor)


def write_untrusted_class(folder: Path, empty_cells_mb: int) -> None:
    """Every learner of the untrusted class under ``folder``."""
    root = os.fsencode(folder)
    solved = json.dumps(_solved(A01), indent=1).encode()
    for learner, files in notebooks().items():
        for name, notebook in files.items():
            _write(os.path.join(root, learner.encode(), name.encode()), json.dumps(notebook).encode())
    _write(os.path.join(root, NOT_UTF8_FOLDER, f"{A01}.ipynb".encode()), solved)
    resume = os.path.join(root, b"resume")
    _write(os.path.join(resume, f"{A01}.ipynb".encode()), solved)
    os.utime(os.path.join(resume, f"{A01}.ipynb".encode()), (1_700_000_000, 1_700_000_000))
    _write(os.path.join(resume, NOT_UTF8_FILE), solved)
    _write(os.path.join(resume, NOT_UTF8_STRAY), b'{"cells": []}')
    _write(os.path.join(root, b"formula", FORMULA_FILE.encode()), b'{"cells": []}')
    _write(os.path.join(root, ESCAPE_FOLDER.encode(), f"{A01}.ipynb".encode()), solved)
    _write(os.path.join(root, b"deep", f"{A01}.ipynb".encode()), solved)
    _deep_folder(os.path.join(root, b"deep", b"d"), DEEP_LEVELS - 1)
    bloated = empty_cells_notebook(empty_cells_mb)
    _write(os.path.join(root, b"bloated_cells", f"{A01}.ipynb".encode()), bloated)


P, F, E, M = "passed", "failed", "error", "missing"
NOTHING = {A01: (0, (M, M, M)), A06: (0, (M, M, M)), A07: (0, (M, M, M))}
SOLVED_01 = (5, (P, P, P))
EXPECTED = {  # learner (as the CSV names it) -> assignment -> (points, statuses of its rows)
    "jos%E9": {A01: SOLVED_01},
    "resume": {A01: SOLVED_01, "notes %FF": (0, (E,))},
    "formula": {"'=1+2*cmd|' -c calc'!A0": (0, (E,))},  # a formula in a cell starts with an apostrophe
    "%1B[1A%1B[2K%0D[1 of 1] correct: 5 of 5 points (1.0 s)%0Aforged": {A01: SOLVED_01},  # ESCAPE_FOLDER
    "deep": {A01: SOLVED_01},
    "bloated_cells": {A01: (0, (E, E, E))},
    "surrogate": {A01: (3, (P, F, P))},
    "quadratic": {A01: SOLVED_01},
    **{f"covert_{kind}": {A01: (3, (P, F, P))} for kind in COVERT},  # the hidden grayscale tests fail alike
    "online_honest": {A06: (1, (P, F, F))},
    "online_from_data": {A06: (0, (F, F, F))},
    "online_by_thread": {A06: (0, (F, F, F))},
    "flash_honest": {A07: (2, (P, F, F))},
}
for _learner, _grades in EXPECTED.items():  # every learner gets a row for each assignment someone handed in
    for _assignment, _nothing in NOTHING.items():
        _grades.setdefault(_assignment, _nothing)
