"""Autograded checks for the exercise notebooks: ``from course.tasks import part01 as tasks``.

Each check function runs the learner's kernel under gpusim (races, barriers, bounds and uninitialised reads
checked) on several seeds and on sizes that do not divide into blocks, compares with a float64 or exact
reference, enforces the memory-traffic budget the lesson taught, and raises :class:`CheckFailed` with a
message a learner can act on. See :mod:`course.tasks.common` for the machinery.
"""

import os
import sys

from course import compilegate

from . import contract, part01, part02, part03, part04, part05, part06, part07
from .common import Budget, Case, CheckFailed, Output, Task, check, judge, make_cases, run
from .part01 import check_grayscale, check_matmul, check_vector_add
from .part02 import check_block_scan, check_block_sum, check_window_sum
from .part03 import check_dot, check_histogram, check_warp_sum

__all__ = [
    "Budget", "Case", "CheckFailed", "Output", "Task", "check", "judge", "make_cases", "run",
    "part01", "part02", "part03", "part04", "part05", "part06", "part07",
    "check_vector_add", "check_grayscale", "check_matmul",
    "check_block_sum", "check_window_sum", "check_block_scan",
    "check_histogram", "check_warp_sum", "check_dot",
]



def in_own_notebook() -> bool:
    """Is this a learner's own notebook kernel (not the grader's run of one)? Only there are a helper process
    and a thread started ahead of the checks: in grading, a plain-Python task must find no other thread."""
    return "ipykernel" in sys.modules and os.environ.get("COURSE_GRADING") != "1"


if in_own_notebook():  # prepare now what the notebook's first check would wait for
    compilegate.start_early()
    contract.warm_up_in_background()

