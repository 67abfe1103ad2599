"""Plain data between the grader and its worker: one JSON object per line, arrays as base64 bytes.

JSON rather than pickle, because the grader reads what an untrusted process wrote: decoding it must never run
code. :func:`decode_array` accepts only numeric dtypes and checks that the bytes match the shape.
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np

MAX_ELEMENTS = 50_000_000
NUMERIC_KINDS = "biuf"


class WireError(ValueError):
    """Data from the worker that is not in the agreed form."""


def encode_array(array) -> dict:
    array = np.ascontiguousarray(array)
    return {"dtype": array.dtype.str, "shape": list(array.shape),
            "data": base64.b64encode(array.tobytes()).decode("ascii")}


def decode_array(value) -> np.ndarray:
    """The array :func:`encode_array` wrote; WireError for anything else."""
    if not isinstance(value, dict) or not isinstance(value.get("dtype"), str) or \
            not isinstance(value.get("data"), str) or not isinstance(value.get("shape"), list):
        raise WireError("an output is not an encoded array")
    shape = value["shape"]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape) or len(shape) > 8:
        raise WireError("an output has an invalid shape")
    try:
        dtype = np.dtype(value["dtype"])
        data = base64.b64decode(value["data"], validate=True)
    except (TypeError, ValueError) as error:
        raise WireError(f"an output cannot be decoded: {error}") from None
    if dtype.kind not in NUMERIC_KINDS or dtype.fields is not None or math.prod(shape) > MAX_ELEMENTS:
        raise WireError(f"an output has dtype {dtype}, not a plain number type")
    if len(data) != math.prod(shape) * dtype.itemsize:
        raise WireError("an output's bytes do not match its shape")
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


def dumps(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


def loads(line: bytes) -> dict:
    try:
        message = json.loads(line)
    except ValueError as error:
        raise WireError(f"not a JSON message: {error}") from None
    if not isinstance(message, dict):
        raise WireError("a message is not a JSON object")
    return message
