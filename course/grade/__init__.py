"""Classroom mode: grade a folder of submitted exercise notebooks, each in sandboxed worker processes.

    python -m course.grade SUBMISSIONS [--out DIR] [--jobs N] [--sandbox auto|bwrap|off]

The trusted grader reads every submission (never writing to it) under the input rules of
:mod:`.discovery`, restores the locked cells from the source notebooks in ``solutions/``, and grades each
notebook with two workers in a bubblewrap sandbox: the learner worker (:mod:`.worker`) runs the learner's
cells and hands out the learner's kernels and launch plans as plain data; the kernel runner (:mod:`.runner`),
where no learner code ever ran, compile-gates and runs those kernels under gpusim. Both run in the
submission's own cgroup, whose CPU time their deadlines count. The grader checks every
message against a strict schema and judges the results itself (:func:`course.tasks.common.judge`), visible
and hidden tests alike. It writes ``grades.csv``, one feedback file per learner and notebook, and prints a
summary that says what the sandbox guaranteed.

Modules, one job each: :mod:`.assignments` (the source notebooks and their checks), :mod:`.recording` (which
Task each check function runs), :mod:`.discovery` (finding submissions, input rules), :mod:`.restore` (reading
a submission and restoring its locked cells), :mod:`.wire` (JSON lines and arrays, with limits),
:mod:`.protocol` (the messages and their schemas), :mod:`.sandbox` (how a worker is confined), :mod:`.staging`
(the learner worker's copy of the course, without what only the grader may run), :mod:`.cgroups` (a resource
domain per submission), :mod:`.uids` (worker user ids, unique on the machine), :mod:`.deadlines` (when a
request has taken too long, and whose doing that is), :mod:`.channel` (a running worker under deadlines and
caps), :mod:`.limits` (what a worker does to itself first), :mod:`.worker` and :mod:`.runner` (the two
workers), :mod:`.serving` (the plain-Python tasks' inputs, handed out a chunk at a time), :mod:`.judging`
(trusted verdicts), :mod:`.grading` (putting it together, in parallel), :mod:`.text` (learner text made safe
to write), :mod:`.reports` (CSV, feedback, summary), :mod:`.cache` (reference measurements kept between runs),
:mod:`.shards` (a class cut into shards and merged again), :mod:`.slurm` (the shards as a Slurm job array) and
:mod:`.platforms` (Gradescope's and PrairieLearn's results files, and Gradescope's autograder zip).
"""
