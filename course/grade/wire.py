"""Plain data between the grader and its workers: one JSON object per line, arrays as base64 bytes.

JSON rather than pickle, because the grader reads what an untrusted process wrote: decoding it must never run
code. The limits come before parsing: :class:`LineReader` never holds more than a line's cap, and
:func:`loads` measures a line's nesting depth and its number of values with :func:`measure` (one linear
pass, no regular expression, bounded memory) before ``json`` sees it, so that neither the time to check a
line nor the objects it becomes are the sender's choice. :func:`decode_array` accepts only numeric dtypes
and checks that the bytes match the shape.
"""

from __future__ import annotations

import base64
import json
import math
import os
from dataclasses import dataclass

import numpy as np

MAX_ELEMENTS = 50_000_000
MAX_DIMENSIONS = 8
NUMERIC_KINDS = "biuf"
MAX_DEPTH = 32  # deeper than any message of the protocol needs
MAX_VALUES = 200_000  # JSON values in one message: far more than any message of the protocol holds
READ_CHUNK = 1 << 20
SCAN_CHUNK = 1 << 18  # bytes :func:`measure` looks at in one step
QUOTE, BACKSLASH = ord('"'), ord("\\")
OTHER, STRING_MARK, OPENING, CLOSING, SEPARATOR = range(5)  # what measure() sees in a byte
_CLASS = np.zeros(256, np.int8)
_CLASS[QUOTE] = STRING_MARK
_CLASS[np.frombuffer(b"[{", np.uint8)] = OPENING
_CLASS[np.frombuffer(b"]}", np.uint8)] = CLOSING
_CLASS[np.frombuffer(b",:", np.uint8)] = SEPARATOR


class WireError(ValueError):
    """Data from a worker that is not in the agreed form."""


class LineTooLong(WireError):
    """A worker sent more bytes without a newline than the message it owes can hold."""


def encode_array(array) -> dict:
    array = np.ascontiguousarray(array)
    return {"dtype": array.dtype.str, "shape": list(array.shape),
            "data": base64.b64encode(array.tobytes()).decode("ascii")}


def encoded_size(nbytes: int) -> int:
    """Bytes an array of ``nbytes`` takes in a message (base64 plus its dtype and shape)."""
    return 4 * (nbytes + 2) // 3 + 200


def decode_array(value) -> np.ndarray:
    """The array :func:`encode_array` wrote; WireError for anything else."""
    if not isinstance(value, dict) or not isinstance(value.get("dtype"), str) or \
            not isinstance(value.get("data"), str) or not isinstance(value.get("shape"), list):
        raise WireError("an output is not an encoded array")
    shape = value["shape"]
    if len(shape) > MAX_DIMENSIONS or \
            not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_ELEMENTS for n in shape):
        raise WireError("an output has an invalid shape")
    if len(value["dtype"]) > 8 or math.prod(shape) > MAX_ELEMENTS:
        raise WireError("an output is not a plain array of numbers")
    try:
        dtype = np.dtype(value["dtype"])
        data = base64.b64decode(value["data"], validate=True)
    except (TypeError, ValueError) as error:
        raise WireError(f"an output cannot be decoded: {error}") from None
    if dtype.kind not in NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise WireError(f"an output has dtype {dtype}, not a plain number type")
    if len(data) != math.prod(shape) * dtype.itemsize:
        raise WireError("an output's bytes do not match its shape")
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


def dumps(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


@dataclass(frozen=True)
class Shape:
    """How a JSON text nests and how many values it holds, measured without parsing it."""

    depth: int  # of arrays and objects
    values: int  # an upper bound: opening brackets, commas and colons outside strings, plus one


def _escaped(backslash: np.ndarray, carried: int) -> np.ndarray:
    """For each byte, whether an odd run of backslashes ends just before it (``carried`` backslashes end the
    previous chunk)."""
    index = np.arange(backslash.size, dtype=np.int64)
    last_other = np.maximum.accumulate(np.where(backslash, -1, index))  # the last byte that is no backslash
    before = np.empty(backslash.size, dtype=np.int64)
    before[0] = carried
    before[1:] = np.where(last_other[:-1] < 0, index[1:] + carried, index[:-1] - last_other[:-1])
    return (before & 1).astype(bool)


def _trailing_backslashes(chunk: np.ndarray, backslash: np.ndarray, carried: int) -> int:
    others = np.flatnonzero(~backslash[-64:])
    if others.size:
        return min(64, chunk.size) - 1 - int(others[-1])
    others = np.flatnonzero(~backslash)
    return chunk.size - 1 - int(others[-1]) if others.size else carried + chunk.size


def measure(text: bytes) -> Shape:
    """The :class:`Shape` of a JSON text, in one pass over it, a chunk at a time (memory bounded by the
    chunk). A quote ends or starts a string unless an odd run of backslashes precedes it; brackets and
    separators count outside strings only. Exact for valid JSON; for anything else, ``json`` refuses the
    text afterwards."""
    depth = deepest = values = 0
    inside, carried = 0, 0  # inside a string at the chunk's start; backslashes ending the last chunk
    for start in range(0, len(text), SCAN_CHUNK):
        chunk = np.frombuffer(text, np.uint8, count=min(SCAN_CHUNK, len(text) - start), offset=start)
        classes = _CLASS[chunk]
        backslash = chunk == BACKSLASH
        if carried or backslash.any():
            classes[(classes == STRING_MARK) & _escaped(backslash, carried)] = OTHER
            carried = _trailing_backslashes(chunk, backslash, carried)
        marks = classes[np.flatnonzero(classes)]
        quotes = marks == STRING_MARK
        after = (np.cumsum(quotes, dtype=np.int64) + inside) & 1  # inside a string after each mark
        outside = marks[(after == 0) & ~quotes]
        opening, closing = outside == OPENING, outside == CLOSING
        values += int(np.count_nonzero(opening)) + int(np.count_nonzero(outside == SEPARATOR))
        steps = opening[opening | closing].astype(np.int64) * 2 - 1
        if steps.size:
            levels = np.cumsum(steps) + depth
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        inside = int(after[-1]) if after.size else inside
    return Shape(deepest, values + 1)


def loads(line: bytes, max_depth: int = MAX_DEPTH, max_values: int = MAX_VALUES) -> dict:
    """One message: a JSON object nested at most ``max_depth`` deep and holding at most ``max_values``
    values; WireError for anything else."""
    shape = measure(line)
    if shape.depth > max_depth:
        raise WireError(f"a message nested {shape.depth} deep (at most {max_depth} is allowed)")
    if shape.values > max_values:
        raise WireError(f"a message of about {shape.values} values (at most {max_values} are allowed)")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise WireError(f"not a JSON message: {str(error)[:200]}") from None
    if not isinstance(message, dict):
        raise WireError("a message is not a JSON object")
    return message


class LineReader:
    """Reads newline-ended messages from a pipe, never holding more than the current message's cap."""

    def __init__(self, fd: int):
        self.fd = fd
        self._buffer = bytearray()

    def line(self, cap: int) -> bytes | None:
        """The next complete line when one is buffered; LineTooLong when the buffer passed ``cap``."""
        end = self._buffer.find(b"\n")
        if end < 0:
            if len(self._buffer) > cap:
                raise LineTooLong(f"a message longer than {cap} bytes, more than this answer can hold")
            return None
        if end > cap:
            raise LineTooLong(f"a message of {end} bytes, more than this answer can hold ({cap})")
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    def fill(self, cap: int) -> bool:
        """Read what the pipe has (at most past ``cap`` by one chunk); False at end of file."""
        chunk = os.read(self.fd, min(READ_CHUNK, cap + 2))
        self._buffer += chunk
        return bool(chunk)
