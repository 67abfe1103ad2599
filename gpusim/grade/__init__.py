"""Classroom mode: grade a folder of submitted exercise notebooks, each in its own sandboxed process.

    python -m gpusim.grade SUBMISSIONS [--out DIR] [--jobs N]

The trusted grader reads every submission (never writing to it), restores the locked cells from the source
notebooks in ``solutions/``, runs the learner's cells and the checks' untrusted half
(:func:`gpusim.tasks.common.run`) in a worker process with a timeout, a memory limit and no network, and
judges the returned arrays and counters itself (:func:`gpusim.tasks.common.judge`), visible and hidden tests
alike. It writes ``grades.csv``, one feedback file per learner and notebook, and prints a summary.

Modules, one job each: :mod:`.assignments` (the source notebooks and their checks), :mod:`.recording`
(which Task each check function runs), :mod:`.discovery` (finding submissions), :mod:`.restore` (reading a
submission and restoring its locked cells), :mod:`.wire` (plain data between the processes), :mod:`.sandbox`
(starting the worker with its limits), :mod:`.worker` (the untrusted process), :mod:`.judging` (trusted
verdicts), :mod:`.grading` (putting it together, in parallel) and :mod:`.reports` (CSV, feedback, summary).
"""
