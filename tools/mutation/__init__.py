"""Mutation testing of the exercise checks: how many small bugs planted in the solution cells they catch.

    python -m tools.mutation [notebooks or tasks...] [-j 2] [--timeout 60] [--limit N] [--name mutation]

* :mod:`.mutator` makes the mutants: one small change each (a flipped comparison, an index off by one, a
  dropped barrier...) in the solution region of a solution cell.
* :mod:`.notebook` reads the code cells of a solution notebook with their nbgrader roles.
* :mod:`.worker` runs a notebook once, then each mutant of it in the same process: the mutated cell and
  every code cell after it, recording the graded check cells that fail.
* :mod:`.battery` decides whether a surviving mutant is equivalent to the original: it compares both on
  many more cases of the same task, outputs and gpusim counters.
* :mod:`.pool` runs mutants in parallel worker processes with a per-mutant timeout, resumably.
* :mod:`.summary` turns the results into ``bench/results/<name>.json`` and ``.md``.
"""
