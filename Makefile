# Two entry points: `make demo` runs the main job, `make test` runs the test suite.
# Both create .venv with Python 3 if it is missing and install medmtl with its extras.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Parallelism comes from processes (pytest-xdist, the grid runner); one BLAS thread each keeps
# the many small dense operations from spinning threads on a busy 2-core machine.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: demo test install clean

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

clean:
	rm -rf $(VENV) results .medmtl_cache
