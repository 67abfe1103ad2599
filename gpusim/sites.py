"""Where things happen in learner code: code objects of kernels, their lines and source text."""

import dis
import linecache
import os
import re
import sys

import numpy as np

TAG = "__gpusim_code_tag__"
_line_cache = {}
_instruction_starts = {}
_start_cache = {}


def is_user_frame(frame):
    """True for frames of rebound kernels and device functions (their globals carry a code tag)."""
    return TAG in frame.f_globals


def _starts(code):
    """Sorted instruction offsets of `code` (cached by id, checked against the code object itself)."""
    entry = _instruction_starts.get(id(code))
    if entry is None or entry[0] is not code:
        entry = _instruction_starts[id(code)] = (
            code,
            np.array([i.offset for i in dis.get_instructions(code)]),
        )
    return entry[1]


def instruction_start(code, lasti):
    """The offset of the instruction that `lasti` belongs to.

    A specialised call in Python 3.11+ reports an offset past the instruction's inline cache, so one
    source site can show two offsets; this maps both to the instruction itself.
    """
    key = (id(code), lasti)
    entry = _start_cache.get(key)
    if entry is None or entry[0] is not code:
        starts = _starts(code)
        entry = _start_cache[key] = (code, int(starts[np.searchsorted(starts, lasti, side="right") - 1]))
    return entry[1]


def instruction_starts(code, offsets):
    """`instruction_start` for a numpy array of offsets in one code object."""
    starts = _starts(code)
    return starts[np.searchsorted(starts, offsets, side="right") - 1]


def line_of(code, lasti):
    """Source line number of the bytecode instruction at offset `lasti`."""
    key = (code, lasti)
    line = _line_cache.get(key)
    if line is None:
        line = code.co_firstlineno
        for start, end, lineno in code.co_lines():
            if start <= lasti < end and lineno is not None:
                line = lineno
                break
        _line_cache[key] = line
    return line


def describe(code, lasti):
    """`file.py:14 (`sA[tx] = a[i]`)` for one instruction of learner code."""
    return describe_line(code.co_filename, line_of(code, lasti))


_LABELLED_CELL = re.compile(r"^<(.*\bcell \d+)>$")


def place_name(filename, lineno):
    """Where a line is, as a learner knows it: `cell In[7], line 4` for a notebook cell (IPython's own name
    for it), `cell 3, line 4` for a cell the course's tools ran, else `file.py:4`."""
    labelled = _LABELLED_CELL.match(filename)
    if labelled:
        return f"{labelled.group(1)}, line {lineno}"
    shell = sys.modules.get("IPython")
    ipython = shell.get_ipython() if shell is not None else None
    name = getattr(getattr(ipython, "compile", None), "format_code_name", lambda _: None)(filename)
    if name:
        return f"cell {name[1]}, line {lineno}"
    return f"{os.path.basename(filename)}:{lineno}"


def describe_line(filename, lineno):
    """`cell In[7], line 4 (`sA[tx] = a[i]`)`: the place of a line and its source text."""
    text = linecache.getline(filename, lineno).strip()
    where = place_name(filename, lineno)
    return f"{where} (`{text}`)" if text else where


def user_frame(depth=2):
    """The innermost frame of learner code above the caller, or None."""
    frame = sys._getframe(depth)
    while frame is not None and TAG not in frame.f_globals:
        frame = frame.f_back
    return frame


def user_stack(depth=2):
    """(code, bytecode offset) of the learner frames that called gpusim, innermost first: the identity
    of a barrier or warp-collective call site, device-function calls included. Compare two stacks
    with `same_site`, which forgives the offset shift of specialised calls."""
    frame = sys._getframe(depth)
    while frame is not None and TAG not in frame.f_globals:
        frame = frame.f_back
    stack = []
    while frame is not None and TAG in frame.f_globals:
        stack.append((frame.f_code, frame.f_lasti))
        frame = frame.f_back
    return tuple(stack)


def normalized(stack):
    return tuple((code, instruction_start(code, lasti)) for code, lasti in stack)


def same_site(a, b):
    """Do two (kind, user_stack) sites name the same call site?"""
    return a == b or (a[0] == b[0] and normalized(a[1]) == normalized(b[1]))


def traceback_user_line(tb):
    """The last learner-code (filename, lineno) in a traceback, or None."""
    found = None
    while tb is not None:
        if TAG in tb.tb_frame.f_globals:
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found
