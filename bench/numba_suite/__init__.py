"""Run every kernel launch of numba-cuda's installed tests under Numba's simulator and under gpusim, and
compare.

`bench/gpusim_numba_suite.py` is the command; `child` runs one test module in a process of its own (the
simulator is chosen when numba is first imported), `launches` runs and compares one launch, `classes` sorts
the launches into the result classes.
"""
