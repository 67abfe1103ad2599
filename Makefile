# The course's two commands: `make lab` and `make test`. Everything they need is installed into .venv.
PYTHON ?= python3
VENV := .venv
GPUSIM_VENV := .venv-gpusim
PY := $(VENV)/bin/python
MLIR_VENV := .venv-mlir
LAB_ARGS ?=
START_PAGE := notebooks/00_start_here.ipynb
# Jupyter refuses to run as root unless told to (containers and CI often are root).
AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
SUBMISSIONS ?=
OUT ?= graded
GRADE_ARGS ?=
SHARDS ?= 8
ASSIGNMENTS ?=
PYTEST_ARGS ?= -n auto --dist loadgroup
MUTATION_ARGS ?= -j 2

SITE_HTML := site/_build/html

.PHONY: lab test lint exercises grade grade-slurm gradescope mutation site wheels gpusim-venv gpusim-numba-suite mlir-venv python-ok venv-ok \
	clean-venv

lab: $(VENV)/.runtime-installed
	$(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" --ServerApp.port_retries=50 $(AS_ROOT) $(LAB_ARGS) $(START_PAGE)

test: $(VENV)/.dev-installed $(GPUSIM_VENV)/.installed $(MLIR_VENV)/.installed site
	$(VENV)/bin/ruff check .
	COURSE_REQUIRE_GPUSIM_VENV=1 $(PY) -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .

# Grade a folder of submitted exercise notebooks, each in sandboxed workers: OUT/grades.csv and OUT/feedback/.
# GRADE_ARGS passes options on, e.g. GRADE_ARGS="--sandbox bwrap --jobs 8" (python -m course.grade --help).
grade: $(VENV)/.runtime-installed
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=path/to/folder [OUT=graded]"; exit 2; }
	$(PY) -m course.grade "$(SUBMISSIONS)" --out "$(OUT)" $(GRADE_ARGS)

# The same on a Slurm cluster, from a login node whose file system the nodes share: a job array of SHARDS
# shards (python -m course.grade --shard K/N), then a merge job into OUT/grades.csv and OUT/feedback/.
grade-slurm: $(VENV)/.runtime-installed
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade-slurm SUBMISSIONS=path/to/folder [SHARDS=8] [OUT=graded]"; exit 2; }
	$(PY) -m course.grade.slurm "$(SUBMISSIONS)" --shards $(SHARDS) --out "$(OUT)" $(GRADE_ARGS)

# Gradescope's autograder for ASSIGNMENTS (names of solutions/ notebooks): dist/autograder.zip, to upload.
gradescope: $(VENV)/.runtime-installed
	@test -n "$(ASSIGNMENTS)" || { echo "usage: make gradescope ASSIGNMENTS='01_kernels_in_python ...'"; exit 2; }
	$(PY) -m course.grade.platforms package $(foreach name,$(ASSIGNMENTS),--assignment $(name)) --out dist/autograder.zip

# Measure the exercise checks by the mutants of the solution cells they kill (a measurement, not a test):
# bench/results/mutation.{json,md}. MUTATION_ARGS passes options on (python -m tools.mutation --help).
mutation: $(VENV)/.runtime-installed
	$(PY) -m tools.mutation $(MUTATION_ARGS)

exercises: $(VENV)/.dev-installed
	$(PY) tools/make_exercises.py

# The course's website in $(SITE_HTML): every lesson run in CPU mode, exercises as learners get them, gpusim's
# README and the grading guide (site/conf.py). Lessons run again only where a notebook or the code it imports
# changed (myst-nb's cache, in site/_build). Nothing is downloaded while it builds; tests/test_site.py reads it.
site: $(VENV)/.dev-installed
	$(PY) -m sphinx -b html -j auto -W --keep-going -q -c site . $(SITE_HTML)

# The course's wheel and gpusim's, in dist/: `pip install --find-links dist gpu-course` installs both anywhere.
wheels: $(VENV)/.dev-installed
	rm -rf dist
	$(PY) -m build --no-isolation --wheel --outdir dist gpusim
	$(PY) -m build --no-isolation --wheel --outdir dist .

python-ok:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python 3.11 or newer is needed: run 'make PYTHON=python3.12 ...' with one you have."; exit 1; }

# A missing or broken .venv (its python gone or unable to start) is rebuilt from scratch.
venv-ok: python-ok
	@$(PY) -c 'import sys' 2>/dev/null || { rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); }

$(VENV)/.runtime-installed: requirements.txt pyproject.toml gpusim/pyproject.toml | venv-ok
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -e ./gpusim -e .
	touch $@

$(VENV)/.dev-installed: requirements-dev.txt $(VENV)/.runtime-installed
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

# gpusim on its own: a virtualenv with only NumPy, greenlet and numba-cuda (and what they need), pinned as in
# requirements.txt. tests/test_gpusim_alone.py runs a copy of gpusim/ in it, with nothing else of the course.
gpusim-venv: $(GPUSIM_VENV)/.installed

$(GPUSIM_VENV)/.installed: requirements.txt | python-ok
	rm -rf $(GPUSIM_VENV) && $(PYTHON) -m venv $(GPUSIM_VENV)
	$(GPUSIM_VENV)/bin/python -m pip install -q -c requirements.txt numpy greenlet numba-cuda
	touch $@

# Every kernel launch of numba-cuda's own installed tests under Numba's simulator and under gpusim, compared bit
# for bit (bench/gpusim_numba_suite.py): writes bench/results/gpusim_numba_suite.json. It takes about an hour and
# a half on 2 cores; SUITE_ARGS="--only test_warp_ops,test_globals" runs some modules and writes nothing.
SUITE_ARGS ?=
gpusim-numba-suite: $(VENV)/.dev-installed
	$(PY) bench/gpusim_numba_suite.py $(SUITE_ARGS)

# numba_cuda_mlir for tests/test_gpusim_mlir.py, in a virtualenv of its own (requirements-mlir.txt says why).
mlir-venv: $(MLIR_VENV)/.installed

$(MLIR_VENV)/.installed: requirements-mlir.txt requirements.txt
	rm -rf $(MLIR_VENV)
	$(PYTHON) -m venv $(MLIR_VENV)
	$(MLIR_VENV)/bin/python -m pip install -q --upgrade pip
	$(MLIR_VENV)/bin/python -m pip install -q -r requirements-mlir.txt
	touch $@

clean-venv:
	rm -rf $(VENV) $(GPUSIM_VENV) $(MLIR_VENV)
