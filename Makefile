# Two entry points: `make demo` runs the main job, `make test` runs the test suite.
# Both create .venv with Python 3 if it is missing and install medmtl with every extra
# (`.[all]`: experiments, notebooks, docs, tests). A user's `pip install .` gets the library
# alone, with what fitting a model needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Parallelism comes from processes (pytest-xdist, the grid runner); one BLAS thread each keeps
# the many small dense operations from spinning threads on a busy 2-core machine.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: demo test docs install clean wheel floors

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(STAMP): $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/python -m pip install -e ".[all]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m medmtl.experiments.demo --out results

test: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest -n 2 -q

# The site in docs/_build/html, warnings as errors; it executes every notebook.
docs: $(STAMP)
	$(BIN)/python -m sphinx -W --keep-going -T -b html docs docs/_build/html

# The wheel (with the bundled data inside) in dist/.
wheel: $(STAMP)
	$(BIN)/python -m pip wheel . --no-deps -w dist

# The dependency floors: every ">=" of setup.cfg's install_requires installed as "==" into
# $(FLOORS_VENV), then a smoke selection of the tests (datasets, kernels, the MED dual, solvers
# and estimators, the online learners' compiled rows, NMTF, metrics, one quick experiment).
FLOORS_VENV  := .venv-floors
FLOORS_TESTS := tests/datasets/test_datasets.py tests/test_kernels.py tests/med/test_dual.py \
                tests/med/test_direct.py tests/med/test_estimators.py tests/online/test_rows.py \
                tests/online/test_shampo.py tests/nmtf tests/evaluation tests/experiments/test_cli.py

floors:
	rm -rf $(FLOORS_VENV)
	$(PYTHON) -m venv $(FLOORS_VENV)
	sed -n '/^install_requires/,/^$$/s/^ *\([A-Za-z0-9_.-]*\)>=\(.*\)/\1==\2/p' setup.cfg > $(FLOORS_VENV)/floors.txt
	$(FLOORS_VENV)/bin/python -m pip install -q --only-binary :all: -r $(FLOORS_VENV)/floors.txt
	$(FLOORS_VENV)/bin/python -m pip install -q -c $(FLOORS_VENV)/floors.txt -e ".[test,experiments]"
	$(FLOORS_VENV)/bin/python -m pip list | grep -iE "^($$(cut -d= -f1 $(FLOORS_VENV)/floors.txt | paste -sd'|')) "
	MPLBACKEND=Agg $(FLOORS_VENV)/bin/python -m pytest -n 2 -q $(FLOORS_TESTS)

# The experiment cache lives in the user's cache directory (or MEDMTL_CACHE): `medmtl cache
# clear` empties it; .medmtl_cache is where older checkouts kept it in the working directory.
clean:
	-test -x $(BIN)/medmtl && $(BIN)/medmtl cache clear
	rm -rf $(VENV) $(FLOORS_VENV) results .medmtl_cache docs/_build docs/api/generated
