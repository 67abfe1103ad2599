"""Learner text as data: every name and message that comes from a submission, made safe to write and show.

A learner chooses the names of their folders and notebooks and the messages of the exceptions their code
raises, and all of it reaches ``grades.csv``, the feedback files, the summary and the instructor's terminal.
None of it may end the run (a file name that is not UTF-8, a lone surrogate in a message), move the
terminal's cursor (escape codes, a newline that forges a progress line), reorder text (bidirectional
overrides) or become a spreadsheet formula. :func:`safe_text` is the one way such text is written anywhere;
:func:`file_name` turns a learner's folder or notebook name into a name of its own, safe as a file name and
in the CSV, that no other name maps to; :func:`csv_cell` neutralises formulas as OWASP advises.
"""

from __future__ import annotations

import hashlib
import os

REPLACEMENT = "\ufffd"  # what an undecodable byte, a lone surrogate or a control character becomes
ELLIPSIS = "…"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula
MAX_NAME_BYTES = 160  # a learner's or notebook's name, as a file name (file systems allow 255)
ESCAPE = "%"  # file_name writes a byte it cannot keep as %XX, and "%" itself as %25
CUT = "%~"  # where file_name cut a long name, before a digest of the whole (never in a name it keeps whole)


def _printable(char: str, lines: bool) -> str:
    if char.isprintable() or (lines and char == "\n"):
        return char
    return " " if char == "\t" else REPLACEMENT


def safe_text(text, limit: int, lines: bool = False) -> str:
    """``text`` (a str, bytes or a path) as printable text of at most ``limit`` characters.

    Bytes are decoded as UTF-8 with replacement; a lone surrogate (an undecodable byte of a file name, or an
    exception message that holds one) becomes U+FFFD, and so does every control, escape and format character
    (ESC and CSI sequences' starts, carriage returns, bidirectional overrides, zero-width characters). A tab
    becomes a space. Newlines are kept only when ``lines`` is true (a message shown in a code block), and
    carriage returns never. Longer text is cut, ending in an ellipsis.
    """
    if isinstance(text, os.PathLike):
        text = os.fspath(text)
    if isinstance(text, bytes):
        text = text[: 4 * limit + 4].decode("utf-8", "replace")
    text = str(text)
    cut = len(text) > limit
    text = text[: limit - 1] if cut else text
    if lines:
        text = text.replace("\r\n", "\n")
    if not all(line.isprintable() for line in (text.split("\n") if lines else (text,))):
        text = "".join(_printable(char, lines) for char in text)
    return text + ELLIPSIS if cut else text


def _kept(char: str, first: bool) -> bool:
    """Whether file_name keeps a character as it is."""
    return char.isprintable() and char not in "%/\\" and not (first and char in ".-~ ")


def _escaped(char: str) -> str:
    if "\udc80" <= char <= "\udcff":  # an undecodable byte of the name, as os.listdir hands it over
        return f"{ESCAPE}{ord(char) - 0xDC00:02X}"
    return "".join(f"{ESCAPE}{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


def file_name(name: str) -> str:
    """A learner's folder name or a notebook's stem as a name of its own: printable, safe as one path
    component, never hidden or starting like an option, and distinct for distinct names.

    An honest name (``alice``, ``josé``, ``01_kernels_in_python``) stays as it is. Any other character (an
    undecodable byte, a control or escape character, ``%``, a slash, a leading dot) is written as ``%XX``
    per byte, so ``jos\\xe9`` becomes ``jos%E9``; since ``%`` itself is always escaped, two names never give
    the same result. A name longer than :data:`MAX_NAME_BYTES` is cut and ends in ``%~`` and a digest of
    the whole name, which no uncut name contains.
    """
    text = "".join(char if _kept(char, index == 0) else _escaped(char) for index, char in enumerate(name))
    if len(text.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES and text:
        return text
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    head = text.encode("utf-8")[: MAX_NAME_BYTES - len(CUT) - len(digest)].decode("utf-8", "ignore")
    escape = head.rfind(ESCAPE, len(head) - 2)
    return (head[:escape] if escape >= 0 else head) + CUT + digest  # no half of an escape before the cut


def csv_cell(text: str) -> str:
    """A cell of ``grades.csv``: text that a spreadsheet would read as a formula gets a leading apostrophe."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text
