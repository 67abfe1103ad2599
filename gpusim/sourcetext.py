"""A kernel's source lines, for the rewriters (rewrite.py, vectorize.py), read without side effects."""

import inspect
import linecache


def source_lines(code) -> tuple[list[str], int]:
    """(lines, first line number) of the function whose code object is ``code``, as
    ``inspect.getsourcelines`` gives them, but read from linecache (notebook cells are there) without
    ``inspect.getmodule``'s walk over ``sys.modules``: that walk reads ``__file__`` of every module, and so
    imports every module imported lazily (``utils`` imports PyTorch so), seconds of a notebook's time.
    Raises OSError when the source cannot be found, as inspect does."""
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return inspect.getsourcelines(code)
    first = code.co_firstlineno
    if not 0 < first <= len(lines):
        raise OSError(f"line {first} is not in {code.co_filename}")
    return inspect.getblock(lines[first - 1:]), first
