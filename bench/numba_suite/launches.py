"""One kernel launch under gpusim: its arguments cloned (arrays that share memory still share it), run
checked or
unchecked, its outputs compared bit for bit with another run's."""

import time

import numpy as np

import gpusim

GPUSIM_TIMEOUT_S = 60


def host_array(value):
    """The NumPy array behind an argument (a NumPy array, a simulator device array, cuda.In/Out/InOut), or
    None."""
    if isinstance(value, np.ndarray):
        return value
    inner = getattr(value, "_ary", None)  # the simulator's device arrays
    if isinstance(inner, np.ndarray):
        return inner
    hinted = getattr(value, "value", None)  # cuda.In / cuda.Out / cuda.InOut
    if type(value).__name__ in ("In", "Out", "InOut") and isinstance(hinted, np.ndarray):
        return hinted
    return None


def _root(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _clone_array(array, memo):
    """A copy of `array`; arrays that are views of one buffer become views of one copy of it."""
    root = _root(array)
    if not (root.flags.c_contiguous or root.flags.f_contiguous) or array.dtype.hasobject:
        return array.copy()
    entry = memo.get(id(root))
    if entry is None:
        entry = memo[id(root)] = (root, root.copy(order="K"))
    offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(array.shape, array.dtype, buffer=entry[1], offset=offset, strides=array.strides)


def clone_args(args, memo=None):
    """The arguments gpusim gets: every array a copy (device arrays and cuda.In/Out hints as NumPy arrays),
    tuples cloned element by element, anything else as it is."""
    memo = {} if memo is None else memo
    cloned = []
    for value in args:
        array = host_array(value)
        if type(value).__name__ in ("In", "Out", "InOut"):  # keep the hint: gpusim honours it
            cloned.append(type(value)(_clone_array(array, memo)))
        elif array is not None:
            cloned.append(_clone_array(array, memo))
        elif isinstance(value, np.void):
            cloned.append(value.copy())
        elif isinstance(value, tuple) and not hasattr(value, "_fields"):
            cloned.append(tuple(clone_args(value, memo)))
        else:
            cloned.append(value)
    return cloned


def outputs(args):
    """Every array among the arguments (in tuples too), in order: what a launch may have written."""
    found = []
    for value in args:
        array = host_array(value)
        if array is not None:
            found.append(array)
        elif isinstance(value, np.void):
            found.append(np.asarray(value))
        elif isinstance(value, tuple):
            found.extend(outputs(value))
    return found


def _unequal_elements(a, b):
    """Flat indices of the elements whose bits differ; a record's padding bytes do not count."""
    if a.dtype.names:
        found = []
        for name in a.dtype.names:
            field_a, field_b = a[name], b[name]
            per_item = int(np.prod(field_a.shape[a.ndim:], dtype=np.int64))  # an array field: its items
            found.append(_unequal_elements(field_a, field_b) // max(per_item, 1))
        return np.unique(np.concatenate(found)) if found else np.array([], dtype=np.int64)
    bits_a = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, a.itemsize)
    bits_b = np.ascontiguousarray(b).reshape(-1).view(np.uint8).reshape(b.size, b.itemsize)
    return np.flatnonzero((bits_a != bits_b).any(axis=1))


def differences(expected, got):
    """'' when the arrays hold the same bits (records: field by field), else the first difference."""
    if len(expected) != len(got):
        return f"{len(expected)} output arrays against {len(got)}"
    for number, (a, b) in enumerate(zip(expected, got, strict=True)):
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"output {number}: {a.dtype}{a.shape} against {b.dtype}{b.shape}"
        if not a.size:
            continue
        unequal = _unequal_elements(np.asarray(a), np.asarray(b))
        if len(unequal):
            index = np.unravel_index(int(unequal[0]), a.shape)
            return f"output {number}{list(map(int, index))}: {a[index]!r} against {b[index]!r} " \
                   f"({len(unequal)} elements differ)"
    return ""


def copy_outputs(source, target):
    """Write the arrays of one run's arguments into another's (the test then sees gpusim's results)."""
    for a, b in zip(outputs(source), outputs(target), strict=True):
        if b.flags.writeable and a.shape == b.shape:
            np.copyto(b, a, casting="unsafe")


def error_record(error):
    """What a launch's exception says: its class, gpusim's unsupported feature, the kernel's own exception."""
    cause = error.__cause__ if isinstance(error, gpusim.KernelException) else None
    return {
        "error": type(error).__name__,
        "gpusim_error": isinstance(error, gpusim.KernelError),
        "feature": getattr(error, "feature", None),
        "cause": type(cause).__name__ if cause is not None else None,
        "message": str(error)[:600],
    }


def run_gpusim(kernel, config, args, check):
    """Launch `kernel` (a @cuda.jit dispatcher) under gpusim on clones of `args`: (record, cloned args)."""
    cloned = clone_args(args)
    start = time.perf_counter()
    record = {}
    try:
        launcher = gpusim.jit(kernel, check=check, timeout=GPUSIM_TIMEOUT_S)
        launcher[config](*cloned)
        record["ok"] = True
        record["engine"] = launcher.engine_used
    except Exception as error:  # noqa: BLE001 -- every failure is recorded and classified
        record.update(ok=False, **error_record(error))
        record["exception"] = error
    record["seconds"] = time.perf_counter() - start
    return record, cloned
