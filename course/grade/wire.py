"""Plain data between the grader and its workers: one JSON object per line, arrays as base64 bytes.

JSON rather than pickle, because the grader reads what an untrusted process wrote: decoding it must never run
code. The limits come before parsing: :class:`LineReader` never holds more than a line's cap, and
:func:`loads` measures a line's nesting depth before ``json`` sees it. :func:`decode_array` accepts only
numeric dtypes and checks that the bytes match the shape.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re

import numpy as np

MAX_ELEMENTS = 50_000_000
MAX_DIMENSIONS = 8
NUMERIC_KINDS = "biuf"
MAX_DEPTH = 32  # deeper than any message of the protocol needs
READ_CHUNK = 1 << 20
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string, escapes included
_OPEN, _CLOSE = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


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


def nesting_depth(line: bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest, counted without parsing it."""
    outside_strings = np.frombuffer(_STRING.sub(b'""', line), np.uint8)
    brackets = outside_strings[np.isin(outside_strings, np.concatenate([_OPEN, _CLOSE]))]
    if brackets.size == 0:
        return 0
    steps = np.where(np.isin(brackets, _OPEN), 1, -1)
    return int(np.cumsum(steps).max())


def loads(line: bytes, max_depth: int = MAX_DEPTH) -> dict:
    """One message: a JSON object nested at most ``max_depth`` deep; WireError for anything else."""
    depth = nesting_depth(line)
    if depth > max_depth:
        raise WireError(f"a message nested {depth} deep (at most {max_depth} is allowed)")
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
