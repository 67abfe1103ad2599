"""The course's own machinery, built on the gpusim simulator.

``tasks``       -- the exercise checks that the notebooks call (``check_*``), one module per part.
``grade``       -- the classroom grader (``python -m course.grade``): every submission in sandboxed workers.
``kernelsource``-- a kernel described as plain data and rebuilt from its source, as the grader needs it.
``compilegate`` -- Numba's real CUDA compiler, with no GPU, in front of every kernel check.
``models``      -- Part 8's teaching models (systolic arrays, pipelines) and their pictures.
``kernels``     -- the kernel ladders that the lessons show and ``bench/`` measures on a GPU.

Importing the package imports none of them.
"""
